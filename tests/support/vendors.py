"""Plans and vendors written straight through the models, for tests that stand on the services alone
(no admin API: the core suite runs without the HTTP package)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.tenancy.models import Branch, Plan, Vendor

FEATURES = {
    "feature_point_expiry": True,
    "feature_campaigns": True,
    "feature_customer_moments": True,
    "feature_tiers": True,
}


async def make_vendor(db: AsyncSession, *, expire_after_days: int | None = None, **plan: Any) -> Vendor:
    """An active vendor on a plan of its own; ``plan`` sets the plan's columns (ceilings, features).
    Every plan feature is on unless a test turns it off, so ``expire_after_days`` takes effect and
    campaigns of both families are allowed."""
    made_plan = Plan(name="p", **(FEATURES | plan))
    db.add(made_plan)
    await db.flush()
    vendor = Vendor(name="v", plan_id=made_plan.id, status="active", points_expire_after_days=expire_after_days)
    db.add(vendor)
    await db.flush()
    return vendor


async def make_branch(db: AsyncSession, vendor_id: int, external_id: str, *, name: str, active: bool = True) -> Branch:
    branch = Branch(vendor_id=vendor_id, external_id=external_id, name=name, active=active)
    db.add(branch)
    await db.flush()
    return branch
