"""A vendor's usage of its plan this month: what each of the plan's limits counts, beside the limit;
and a shop's own choice of another plan, judged against that usage.

It reads across tenancy, customers, rewards and earning, so it sits above them all. One statement:
each count is a scalar subquery, the meter's row read by its key.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from sqlalchemy import ColumnElement, ScalarSelect, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.customers.counts import held_customers
from loyalty_core.earning.models import Campaign, Transaction, meter_leases, meters
from loyalty_core.errors import ValidationFailed
from loyalty_core.mailings.models import MailingRecipient, RecipientState
from loyalty_core.rewards.models import Reward, RewardStatus
from loyalty_core.tenancy.errors import VendorNotFound
from loyalty_core.tenancy.models import Branch, Plan, Vendor
from loyalty_core.tenancy.services.ceilings import lock_vendor


@dataclass(frozen=True, slots=True)
class Usage:
    """The current UTC month's use of each of the plan's limits, beside the limit (zero: unlimited)."""

    period_start: date
    period_end: date
    transactions: int
    max_transactions: int
    overage_percent: int
    customers: int
    max_customers: int
    rewards: int
    max_rewards: int
    campaigns: int
    max_campaigns: int
    locations: int
    max_locations: int
    campaign_mails: int = 0
    """Campaign messages sent this month (MAIL-14)."""
    max_campaign_mails: int = 0


def month_of(now: datetime) -> tuple[date, date]:
    """The calendar month in UTC holding ``now``, as its first and last day (both inclusive)."""
    today = now.astimezone(UTC).date()
    return today.replace(day=1), today.replace(day=calendar.monthrange(today.year, today.month)[1])


def _count(model: type, *conditions: ColumnElement[bool]) -> ScalarSelect[int]:
    return select(func.count()).select_from(model).where(*conditions).scalar_subquery()


class UsageReads:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def usage(self, vendor_id: int) -> Usage:
        """Customers count as the ceiling does (anonymized ones free their place), from the kept
        count (DASHBOARD-7), rewards the
        active ones, campaigns and branches every one held. Transactions: on a plan that meters
        them, the meter the limit reads less the units leased to processes ahead of their
        purchases (EARN-17, EARN-18), living or not: the metered purchases written this month (never
        more than the purchases recorded: units a process of a release before leases held when it
        died are on the meter without a lease); on an unlimited plan (nothing metered), the
        purchases recorded this month."""
        start, end = month_of(self._clock.now())
        begins = datetime.combine(start, time(), UTC)
        ends = datetime.combine(end + timedelta(days=1), time(), UTC)
        metered = (
            select(meters.c.used).where(meters.c.vendor_id == vendor_id, meters.c.period == start).scalar_subquery()
        )
        leased = (
            select(func.count())
            .select_from(meter_leases)
            .where(meter_leases.c.vendor_id == vendor_id, meter_leases.c.period == start)
            .scalar_subquery()
        )
        purchases = _count(
            Transaction,
            Transaction.vendor_id == vendor_id,
            Transaction.created_at >= begins,
            Transaction.created_at < ends,
        )
        row = (
            await self._session.execute(
                select(
                    Plan,
                    func.coalesce(metered, 0) - leased,
                    purchases,
                    held_customers(vendor_id),
                    _count(
                        Reward,
                        Reward.vendor_id == vendor_id,
                        Reward.status == RewardStatus.ACTIVE,
                        Reward.deleted_at.is_(None),
                    ),
                    _count(Campaign, Campaign.vendor_id == vendor_id),
                    _count(Branch, Branch.vendor_id == vendor_id),
                    _count(
                        MailingRecipient,
                        MailingRecipient.vendor_id == vendor_id,
                        MailingRecipient.state == RecipientState.SENT,
                        MailingRecipient.customer_id.is_not(None),
                        MailingRecipient.decided_at >= begins,
                        MailingRecipient.decided_at < ends,
                    ),
                )
                .join(Vendor, Vendor.plan_id == Plan.id)
                .where(Vendor.id == vendor_id)
            )
        ).first()
        if row is None:
            raise VendorNotFound("No vendor has this id.", vendor_id=vendor_id)
        plan, meter, recorded, customers, rewards, campaigns, locations, mails = row
        return Usage(
            period_start=start,
            period_end=end,
            transactions=int(min(meter, recorded) if plan.max_transactions > 0 else recorded),
            max_transactions=plan.max_transactions,
            overage_percent=plan.overage_percent,
            customers=int(customers),
            max_customers=plan.max_customers,
            rewards=int(rewards),
            max_rewards=plan.max_rewards,
            campaigns=int(campaigns),
            max_campaigns=plan.max_campaigns,
            locations=int(locations),
            max_locations=plan.max_locations,
            campaign_mails=int(mails),
            max_campaign_mails=plan.max_campaign_mails,
        )


LIMITS = (
    ("customers", "max_customers", "customers"),
    ("rewards", "max_rewards", "active rewards"),
    ("campaigns", "max_campaigns", "campaigns"),
    ("locations", "max_locations", "branches"),
)
"""The ceilings a plan choice is judged by (usage field, plan field, what is counted). The
transaction meter is no ceiling: it restarts every month."""


class PlanChoice(UsageReads):
    async def selectable_plans(self) -> list[Plan]:
        found = await self._session.scalars(select(Plan).where(Plan.selectable.is_(True)).order_by(Plan.id))
        return list(found.all())

    async def choose(self, vendor_id: int, plan_id: int) -> Plan:
        """PLAN-3: a shop's owner switches to a ``selectable`` plan at once; a plan whose ceilings
        today's usage exceeds is refused naming that limit, so no shop is left over a ceiling. The
        vendor row is locked first, so a creation racing the switch meets the new ceiling after it."""
        await lock_vendor(self._session, vendor_id)
        plan = await self._session.get(Plan, plan_id)
        if plan is None or not plan.selectable:
            raise ValidationFailed("This plan cannot be chosen.", {"plan_id": ["Choose one of the plans offered."]})
        usage = await self.usage(vendor_id)
        for used_field, limit_field, counted in LIMITS:
            used, limit = getattr(usage, used_field), getattr(plan, limit_field)
            if limit and used > limit:
                raise ValidationFailed(
                    f"The plan allows at most {limit} {counted}; the shop holds {used}.",
                    {limit_field: [f"The plan allows at most {limit} {counted}; the shop holds {used}."]},
                )
        await self._session.execute(update(Vendor).where(Vendor.id == vendor_id).values(plan_id=plan.id))
        return plan
