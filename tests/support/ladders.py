"""A vendor's tier ladder and qualifying months written straight through the models and committed
(``tests.support.tiers`` writes them in the test's session), for tests of what a ladder changes
elsewhere (earning, rewards, events) without the ladder's own service."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import delete, text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.db import make_engine, make_sessionmaker
from loyalty_core.tiers.models import Tier, TierLadder
from loyalty_core.tiers.rules import TierBasis
from tests.support.tiers import add_month, make_ladder

TIERS_PLAN = {"features": {"tiers": True}}
"""``make_tenant``'s plan with the ``tiers`` feature (TIER-5)."""

SILVER_GOLD = (("silver", "Silver", 0, 100), ("gold", "Gold", 5000, 150))
"""Silver from the start (no bonus), Gold at 5,000 (cents or points) with half as much again."""


async def put_ladder(
    engine: AsyncEngine,
    vendor_id: int,
    rungs: tuple[tuple[str, str, int, int], ...] = SILVER_GOLD,
    *,
    basis: TierBasis = TierBasis.SPEND,
    period_months: int = 12,
    grace_months: int = 0,
) -> dict[str, int]:
    """The vendor's ladder, replacing any (``rungs``: key, name, threshold, multiplier_percent),
    committed; the tiers' ids by key."""
    async with make_sessionmaker(engine).begin() as db:
        await db.execute(delete(Tier).where(Tier.vendor_id == vendor_id))
        await db.execute(delete(TierLadder).where(TierLadder.vendor_id == vendor_id))
        return await make_ladder(db, vendor_id, basis=basis, period=period_months, grace=grace_months, rungs=rungs)


async def qualify(engine: AsyncEngine, vendor_id: int, customer_id: int, month: date, spend: int, points: int) -> None:
    """Adds a month's qualifying amounts to the customer's, as the till's purchases would (TIER-2),
    committed."""
    async with make_sessionmaker(engine).begin() as db:
        await add_month(db, vendor_id, customer_id, month, spend=spend, points=points)


async def tier_events(database_url: str, vendor_id: int) -> list[tuple[int, Any, datetime]]:
    """The vendor's ``customer.tier_changed`` events as stored: customer, data, created_at, oldest first."""
    engine = make_engine(database_url)
    try:
        async with engine.connect() as conn:
            found = await conn.execute(
                text(
                    "SELECT customer_id, data, created_at FROM events"
                    " WHERE vendor_id = :v AND type = 'customer.tier_changed' ORDER BY created_at, id"
                ),
                {"v": vendor_id},
            )
            return [(customer_id, data, at) for customer_id, data, at in found.all()]
    finally:
        await engine.dispose()
