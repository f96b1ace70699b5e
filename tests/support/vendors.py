"""Plans and vendors written straight through the models, for tests that stand on the services alone
(no admin API: the core suite runs without the HTTP package)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.tenancy.models import Plan, Vendor


async def make_vendor(db: AsyncSession, *, expire_after_days: int | None = None, **plan: Any) -> Vendor:
    """An active vendor on a plan of its own; ``plan`` sets the plan's columns (ceilings, features).
    Point expiry is a plan feature on by default here, so ``expire_after_days`` takes effect unless
    a test turns the feature off."""
    made_plan = Plan(name="p", **{"feature_point_expiry": True, **plan})
    db.add(made_plan)
    await db.flush()
    vendor = Vendor(name="v", plan_id=made_plan.id, status="active", points_expire_after_days=expire_after_days)
    db.add(vendor)
    await db.flush()
    return vendor
