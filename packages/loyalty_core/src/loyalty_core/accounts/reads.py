"""The back office's reads of a shop's customers for the portal's pages: the search (the admin API's
``q``, by the same condition, newest first) and the customers' export with their cards and balance."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, Final

from sqlalchemy import Select, and_, func, literal, select
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_core.accounts.search import matching
from loyalty_core.customers.models import Customer, CustomerIdentifier, CustomerStatus, IdentifierType
from loyalty_core.listing import stream_rows
from loyalty_core.wallet.models import Wallet

FOUND = 50
"""The customers a search shows, newest first."""

CUSTOMER_COLUMNS: Final = (
    "id",
    "external_id",
    "first_name",
    "last_name",
    "email",
    "phone",
    "date_of_birth",
    "status",
    "cards",
    "balance",
    "created_at",
)
"""The columns of :func:`customer_rows`, in order: an export's header row."""


async def search(session: AsyncSession, vendor_id: int, q: str) -> Sequence[Customer]:
    """The shop's customers whose card code, email or external id is ``q`` or whose name holds it
    (``accounts.search.matching``); without ``q`` the newest. Anonymized customers never appear."""
    found = await session.scalars(
        select(Customer).where(matching(vendor_id, q)).order_by(Customer.id.desc()).limit(FOUND)
    )
    return found.all()


def _export(vendor_id: int) -> Select[Any]:
    cards = (
        select(func.string_agg(CustomerIdentifier.value, aggregate_order_by(literal(" "), CustomerIdentifier.id)))
        .where(
            CustomerIdentifier.vendor_id == vendor_id,
            CustomerIdentifier.customer_id == Customer.id,
            CustomerIdentifier.type == IdentifierType.LOYALTY_CARD,
            CustomerIdentifier.active.is_(True),
        )
        .scalar_subquery()
    )
    return (
        select(
            Customer.id,
            Customer.external_id,
            Customer.first_name,
            Customer.last_name,
            Customer.email,
            Customer.phone,
            Customer.date_of_birth,
            Customer.status,
            cards,
            func.coalesce(Wallet.balance, 0),
            Customer.created_at,
        )
        .outerjoin(Wallet, and_(Wallet.vendor_id == Customer.vendor_id, Wallet.customer_id == Customer.id))
        .where(Customer.vendor_id == vendor_id, Customer.status != CustomerStatus.ANONYMIZED)
        .order_by(Customer.id)
    )


def customer_rows(
    sessionmaker: async_sessionmaker[AsyncSession], vendor_id: int
) -> AsyncIterator[Sequence[Sequence[Any]]]:
    """Every customer of the shop but anonymized ones, in id order, a chunk of rows at a time, each
    row the :data:`CUSTOMER_COLUMNS` (the active cards' codes space-separated, the balance 0 without
    a wallet). Read when iterated, in a session of its own."""
    return stream_rows(sessionmaker, _export(vendor_id))
