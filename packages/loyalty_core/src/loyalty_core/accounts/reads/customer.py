"""The customer read with its balance: one statement for profile, balance and identifiers, for
every read that shows a customer through the ORM (one customer, a search page, a customer event's
data).

It sits above customers and wallet because it joins both; the customers area only knows the shape
(``customers.reads.customer``). The balance leaves out the points past their end that the nightly job
has not expired yet (LEDGER-9), as the till's lookup (``till_lookup``) and the wallet read do: what
the portal and the admin API show is what a till can spend."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg.rows import dict_row
from sqlalchemy import BigInteger, Select, and_, cast, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.accounts.till_lookup import customer_found, lookup_read
from loyalty_core.clock import Clock
from loyalty_core.customer_columns import customer_view as customer_view
from loyalty_core.customers import errors as e
from loyalty_core.customers.models import Customer, CustomerStatus
from loyalty_core.customers.reads.customer import IDENTIFIER_LIST, CustomerView
from loyalty_core.db import driver_connection
from loyalty_core.referrals.reads import codes_shown_column
from loyalty_core.tiers.reads import tier_facts_column
from loyalty_core.till_sql import bound
from loyalty_core.wallet.models import Wallet, due_points
from loyalty_core.wallet.till_pending import available_shown

_C = Customer.__table__.c
_W = Wallet.__table__.c


def customer_rows(now: datetime) -> Select[Any]:
    """Every customer of every status with ``balance``, ``identifier_list``, ``tier_facts`` (TIER-6)
    and ``referral_codes`` (REFERRAL-6): add the ``where``, read each row with :func:`customer_view`."""
    due = due_points(_W.vendor_id, _W.id, now).scalar_subquery()
    balance = func.coalesce(_W.balance, 0) - due + available_shown(_W, now)
    return (
        # a sum of bigint is numeric: cast back, or the balance would be read as a Decimal
        select(
            *_C,
            cast(balance, BigInteger).label("balance"),
            IDENTIFIER_LIST,
            tier_facts_column(now),
            codes_shown_column(),
        )
        .select_from(Customer.__table__)
        .outerjoin(Wallet.__table__, and_(_W.vendor_id == _C.vendor_id, _W.customer_id == _C.id))
    )


class CustomerReads:
    """The customer read the API answers with; the customer writes are given it as their read part
    (``customers.services.ports.CustomerRead``)."""

    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def get(self, vendor_id: int, customer_id: int) -> CustomerView:
        row = (
            (
                await self._session.execute(
                    customer_rows(self._clock.now()).where(
                        _C.vendor_id == vendor_id, _C.id == customer_id, _C.status != CustomerStatus.ANONYMIZED
                    )
                )
            )
            .mappings()
            .first()
        )
        if row is None:
            raise e.CustomerNotFound("No customer of the vendor has this id.", customer_id=customer_id)
        return customer_view(row)

    async def lookup(
        self, vendor_id: int, *, identifier: str | None = None, external_id: str | None = None
    ) -> CustomerView:
        """By ``external_id`` when given, else by any active identifier, retired types included: the
        till's statement (``till_lookup``), so an identifier left on a closed account answers the
        account that stays on both paths alike. It runs on the session's connection, after what the
        session holds unwritten."""
        await self._session.flush()
        read = lookup_read(now=self._clock.now(), identifier=identifier, external_id=external_id)
        conn = await driver_connection(self._session)
        async with conn.cursor(row_factory=dict_row) as cursor:
            await cursor.execute(read.sql, {**bound(read.params), "vendor_id": vendor_id}, prepare=True)
            return customer_found(await cursor.fetchone())
