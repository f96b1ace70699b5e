"""The identifier rows a write adds or takes: an identifier added, a free card checked and claimed, a
new card issued, an identifier brought by an import. Registration, the profile's email and a further
card all write them through these functions.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.customers import cards
from loyalty_core.customers import errors as e
from loyalty_core.customers.models import CustomerIdentifier
from loyalty_core.customers.profiles import IdentifierInput

ISSUE_ATTEMPTS = 8
"""A fresh random code collides with an existing one about once in millions of issues; retrying a
few times makes a failure practically impossible without hiding a broken generator."""


async def add_identifier(
    session: AsyncSession, vendor_id: int, customer_id: int, type_: str, value: str, at: datetime
) -> None:
    added = await session.scalar(
        pg_insert(CustomerIdentifier)
        .values(
            vendor_id=vendor_id,
            customer_id=customer_id,
            type=type_,
            value=cards.normalise_value(type_, value),
            active=True,
            assigned_at=at,
            created_at=at,
            updated_at=at,
        )
        .on_conflict_do_nothing()
        .returning(CustomerIdentifier.id)
    )
    if added is None:
        raise e.IdentifierDuplicate(f"The {type_} identifier is already registered for the vendor.")


async def check_free_card(session: AsyncSession, vendor_id: int, code: str) -> None:
    row = (
        await session.execute(
            select(CustomerIdentifier.type, CustomerIdentifier.active, CustomerIdentifier.customer_id).where(
                CustomerIdentifier.vendor_id == vendor_id,
                func.lower(CustomerIdentifier.value) == func.lower(code),
            )
        )
    ).first()
    if row is None or row.type != cards.LOYALTY_CARD or not row.active or row.customer_id is not None:
        raise e.LoyaltyCardNotFound(
            "The loyalty card is not a free card of the vendor (unknown, blocked or already assigned); "
            "rescan, or send no identifiers so a card is issued."
        )


async def claim(session: AsyncSession, vendor_id: int, code: str, customer_id: int, at: datetime) -> None:
    """Take a free card; the conditional update decides a race for it in the database."""
    if not await try_claim(session, vendor_id, code, customer_id, at):
        raise e.IdentifierDuplicate("The scanned card was claimed by another customer first.")


async def try_claim(session: AsyncSession, vendor_id: int, code: str, customer_id: int, at: datetime) -> bool:
    """Assign the card if it is free and active; answers whether it was."""
    claimed = await session.scalar(
        update(CustomerIdentifier)
        .where(
            CustomerIdentifier.vendor_id == vendor_id,
            func.lower(CustomerIdentifier.value) == func.lower(code),
            CustomerIdentifier.type == cards.LOYALTY_CARD,
            CustomerIdentifier.customer_id.is_(None),
            CustomerIdentifier.active.is_(True),
        )
        .values(customer_id=customer_id, assigned_at=at, updated_at=at)
        .returning(CustomerIdentifier.id)
        .execution_options(synchronize_session=False)
    )
    return claimed is not None


async def issue(session: AsyncSession, vendor_id: int, customer_id: int | None, at: datetime) -> str:
    for _ in range(ISSUE_ATTEMPTS):
        code = cards.new_code()
        added = await session.scalar(
            pg_insert(CustomerIdentifier)
            .values(
                vendor_id=vendor_id,
                customer_id=customer_id,
                type=cards.LOYALTY_CARD,
                value=code,
                active=True,
                assigned_at=at if customer_id is not None else None,
                created_at=at,
                updated_at=at,
            )
            .on_conflict_do_nothing()
            .returning(CustomerIdentifier.id)
        )
        if added is not None:
            return code
    raise RuntimeError("could not find a free loyalty card code")


async def bring(
    session: AsyncSession, vendor_id: int, customer_id: int, brought: IdentifierInput, at: datetime
) -> None:
    """An imported identifier: a free card of the vendor is claimed, an unknown card or retired
    value is created; anything held already is a duplicate."""
    if brought.type == cards.LOYALTY_CARD and await try_claim(
        session, vendor_id, cards.normalise_code(brought.value), customer_id, at
    ):
        return
    await add_identifier(session, vendor_id, customer_id, brought.type, brought.value, at)
