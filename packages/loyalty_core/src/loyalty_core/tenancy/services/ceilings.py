"""Plan ceilings: the vendor row locked, the rows held counted, the plan's maximum compared.

PLAN-1, PLAN-2: reaching ``max_customers``, ``max_rewards``, ``max_locations`` or
``max_campaigns`` refuses the create with 422 VALIDATION_ERROR (zero means unlimited). The count
and the insert that follows run under the vendor row lock, so concurrent creations meet the
ceiling one by one and it stays exact. ``FOR NO KEY UPDATE`` serialises those creations without
blocking inserts of other rows that reference the vendor (their foreign-key checks take
``FOR KEY SHARE``). The transaction meter (429 PLAN_LIMIT_EXCEEDED) is not a ceiling: it must not
serialise a vendor's transactions behind one lock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.errors import ValidationFailed
from loyalty_core.tenancy.errors import VendorNotFound
from loyalty_core.tenancy.models import Plan, Vendor


@dataclass(frozen=True, slots=True)
class Ceiling:
    """How a refusal names the ceiling: "The plan's {label} ceiling is reached.", and under
    ``field``: "The plan allows at most {n} {counted}; {remedy}"."""

    label: str
    counted: str
    field: str
    remedy: str


CUSTOMERS = Ceiling("customer", "customers", "plan", "upgrade the plan or anonymize customers.")
REWARDS = Ceiling(
    "reward",
    "active rewards",
    "status",
    "upgrade the plan, deactivate or delete a reward, or create this one inactive.",
)
BRANCHES = Ceiling("branch", "branches", "external_id", "upgrade the plan or reuse a branch.")
CAMPAIGNS = Ceiling("campaign", "campaigns", "family", "upgrade the plan or delete a campaign.")


async def plan_of(session: AsyncSession, vendor_id: int, *, lock: bool = False) -> Plan:
    """The vendor's plan; with ``lock``, the vendor row is held ``FOR NO KEY UPDATE`` until commit."""
    statement = select(Plan).join(Vendor, Vendor.plan_id == Plan.id).where(Vendor.id == vendor_id)
    if lock:
        statement = statement.with_for_update(of=Vendor, key_share=True)
    plan = await session.scalar(statement)
    if plan is None:
        raise VendorNotFound("No vendor has this id.", vendor_id=vendor_id)
    return plan


async def lock_vendor(session: AsyncSession, vendor_id: int) -> None:
    """Hold the vendor row ``FOR NO KEY UPDATE`` until commit, for a caller that read the plan already."""
    await session.execute(select(Vendor.id).where(Vendor.id == vendor_id).with_for_update(key_share=True))


async def ensure_room(session: AsyncSession, maximum: int | None, held: Select[Any], ceiling: Ceiling) -> None:
    """Refuse when the rows counted by ``held`` already reach ``maximum``; call it under the vendor lock."""
    if not maximum:
        return
    count = await session.scalar(held)
    if (count or 0) >= maximum:
        raise ValidationFailed(
            f"The plan's {ceiling.label} ceiling is reached.",
            {ceiling.field: [f"The plan allows at most {maximum} {ceiling.counted}; {ceiling.remedy}"]},
        )
