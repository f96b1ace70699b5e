"""The back office's reads for the portal's pages: each scoped by the shop, the search by the admin
API's own condition, the staff names by the shop's own users."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.customer_list import customer_list
from loyalty_core.customers.models import CustomerIdentifier, CustomerStatus, IdentifierType
from loyalty_core.staff.models import User
from loyalty_core.staff.reads import user_emails
from tests.support.vendors import make_vendor
from tests.support.wallets import make_customer


async def search(db: AsyncSession, vendor_id: int, q: str) -> list[int]:
    found = await customer_list(db, datetime.now(UTC), vendor_id, q=q, status=None, sort="newest", page=1)
    return [row.id for row in found.items]


async def test_the_search_finds_a_shops_customers_newest_first_by_the_admin_condition(db: AsyncSession) -> None:
    """TENANCY-1, PORTAL-4: the portal's customer list searches by the admin API's ``q`` over the shop's
    own customers."""
    shop, other = await make_vendor(db), await make_vendor(db)
    older = await make_customer(db, shop.id, email="jose@shop.example")
    newer = await make_customer(db, shop.id)
    gone = await make_customer(db, shop.id)
    gone.status = CustomerStatus.ANONYMIZED
    elsewhere = await make_customer(db, other.id)
    older.last_name, newer.first_name = "Peña", "José"
    await db.flush()

    assert await search(db, shop.id, "") == [newer.id, older.id]
    assert await search(db, shop.id, "jose") == [newer.id]  # without regard to accents
    assert await search(db, shop.id, "JOSE@SHOP.EXAMPLE") == [older.id]
    card = await db.scalar(
        select(CustomerIdentifier.value).where(
            CustomerIdentifier.customer_id == elsewhere.id, CustomerIdentifier.type == IdentifierType.LOYALTY_CARD
        )
    )
    assert card is not None
    assert await search(db, shop.id, card.lower()) == []  # another shop's card names no one here
    assert await search(db, other.id, card.lower()) == [elsewhere.id]


async def test_staff_names_are_the_shops_own_users(db: AsyncSession) -> None:
    """TENANCY-1: a user id of another shop names no one on this shop's pages."""
    shop, other = await make_vendor(db), await make_vendor(db)
    ours = User(vendor_id=shop.id, email="ours@shop.example", role="owner", password_hash="x", active=True)
    theirs = User(vendor_id=other.id, email="theirs@shop.example", role="owner", password_hash="x", active=True)
    db.add_all([ours, theirs])
    await db.flush()
    assert await user_emails(db, shop.id, {ours.id, theirs.id}) == {ours.id: "ours@shop.example"}
    assert await user_emails(db, shop.id, set()) == {}
