"""Customers with wallets and points written straight through the models and ``Posting.post``,
so wallet tests stand on the ledger alone."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from loyalty_core.clock import FixedClock
from loyalty_core.customers.models import Customer, CustomerIdentifier
from loyalty_core.db import make_sessionmaker
from loyalty_core.tenancy.models import Vendor
from loyalty_core.wallet.models import Causer, PendingPoints, Wallet
from loyalty_core.wallet.resources import LedgerEntry
from loyalty_core.wallet.services import WalletService

_cards = itertools.count(1)
TILL = Causer("api_client", "cl_till")
PORTAL = Causer("portal_user", "admin")
ASSIGNED = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class ModelLot:
    """A lot as the property tests' reference models hold it: the points left, its end (None: never)
    and its place in the order of arrival."""

    remaining: int
    expires_at: datetime | None
    order: int


async def make_customer(
    db: AsyncSession,
    vendor_id: int,
    *,
    email: str | None = None,
    card: bool = True,
    assigned_at: datetime | None = None,
) -> Customer:
    """An active customer with a wallet at 0, a loyalty card unless ``card`` is false, and an email
    identifier when ``email`` is given; flushed, not committed."""
    customer = Customer(vendor_id=vendor_id, first_name="Ann", email=email, locale="nl", status="active")
    db.add(customer)
    await db.flush()
    db.add(Wallet(vendor_id=vendor_id, customer_id=customer.id, balance=0))
    identifiers = [("loyalty_card", f"CARD{next(_cards):07d}", assigned_at or ASSIGNED)] if card else []
    if email:
        identifiers.append(("email", email, ASSIGNED))
    for kind, value, at in identifiers:
        db.add(
            CustomerIdentifier(
                vendor_id=vendor_id, customer_id=customer.id, type=kind, value=value, active=True, assigned_at=at
            )
        )
    await db.flush()
    return customer


async def new_customer(engine: AsyncEngine, vendor_id: int, *, email: str | None = None) -> int:
    """``make_customer`` in a transaction of its own, committed; answers the customer's id."""
    async with make_sessionmaker(engine).begin() as db:
        return int((await make_customer(db, vendor_id, email=email)).id)


async def earn(
    engine: AsyncEngine, vendor_id: int, customer_id: int, points: int, *, at: datetime, days: int | None = None
) -> None:
    """Earned points as a purchase writes them: through Posting.post."""
    async with make_sessionmaker(engine).begin() as db:
        service = WalletService(db, FixedClock(at))
        wallet = await service.posting.wallet_of(vendor_id, customer_id, lock=True)
        await service.posting.post(
            wallet, points, kind="earn", causer=Causer("api_client", "cl_earn"), expire_after_days=days
        )


async def earned(
    db: AsyncSession, clock: FixedClock, vendor: Vendor, customer: Customer, points: int, days: int | None = None
) -> LedgerEntry:
    """Earned points inside the test's own session, through ``Posting.post`` as earning writes them."""
    service = WalletService(db, clock)
    wallet = await service.posting.wallet_of(vendor.id, customer.id, lock=True)
    entry, _ = await service.posting.post(wallet, points, kind="earn", causer=TILL, expire_after_days=days)
    return entry


async def pend(
    engine: AsyncEngine, vendor_id: int, customer_id: int, points: int, *, at: datetime, ends: datetime | None = None
) -> None:
    """Points pending until ``at`` (PENDING-2) as a purchase's statement leaves them: a pending row
    and the wallet's next instant, no entry."""
    async with make_sessionmaker(engine).begin() as db:
        wallet = await WalletService(db, FixedClock(at)).posting.wallet_of(vendor_id, customer_id, lock=True)
        db.add(
            PendingPoints(
                vendor_id=vendor_id,
                wallet_id=wallet.id,
                transaction_id=0,
                entry_type="earn",
                points=points,
                available_at=at,
                lot_expires_at=ends,
                causer_type="api_client",
                causer_id="cl_earn",
            )
        )
        wallet.pending_next_at = at if wallet.pending_next_at is None else min(at, wallet.pending_next_at)
