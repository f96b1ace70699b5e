"""Ladders and qualifying months written straight through the models, for tests of the tier reads
(the till's statements write the months in production; the ladder's writer is ``TierService``)."""

from __future__ import annotations

from datetime import date

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.tiers.models import Tier, TierLadder

RUNGS = (("bronze", "Bronze", 0, 100), ("silver", "Silver", 10_000, 110), ("gold", "Gold", 50_000, 125))
"""key, name, threshold, multiplier_percent: a shop's three tiers by spend (cents)."""


async def make_ladder(
    db: AsyncSession,
    vendor_id: int,
    *,
    basis: str = "spend",
    period: int = 12,
    grace: int = 0,
    rungs: tuple[tuple[str, str, int, int], ...] = RUNGS,
) -> dict[str, int]:
    """The vendor's ladder, flushed; answers each tier's id by key."""
    ladder = TierLadder(vendor_id=vendor_id, basis=basis, period_months=period, grace_months=grace)
    db.add(ladder)
    await db.flush()
    made = [
        Tier(vendor_id=vendor_id, ladder_id=ladder.id, position=i, key=k, name=n, threshold=t, multiplier_percent=p)
        for i, (k, n, t, p) in enumerate(rungs)
    ]
    db.add_all(made)
    await db.flush()
    return {t.key: t.id for t in made}


async def add_month(
    db: AsyncSession, vendor_id: int, customer_id: int, month: date, *, spend: int = 0, points: int = 0
) -> None:
    """Adds to a customer's qualifying month as the till's purchase statement does."""
    await db.execute(
        text(
            "INSERT INTO tier_months AS tmo (vendor_id, customer_id, month, spend, points)"
            " VALUES (:v, :c, :m, :s, :p) ON CONFLICT (vendor_id, customer_id, month)"
            " DO UPDATE SET spend = tmo.spend + excluded.spend, points = tmo.points + excluded.points"
        ),
        {"v": vendor_id, "c": customer_id, "m": month, "s": spend, "p": points},
    )
