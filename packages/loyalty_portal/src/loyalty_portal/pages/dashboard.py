"""The dashboard, the page a user lands on (DASHBOARD-1 to DASHBOARD-4): over the last 7, 30 or 90
days (the range in the URL), the points issued (earned apart), redeemed and expired per day as a
chart, the range's redemptions and new customers, and each branch's purchases and redemptions;
active customers, points outstanding and this month's transactions against the plan. Every figure
comes from the folded totals (the ledger's and the branches') and indexed counts: a visit reads no
customer's ledger and no shop's purchases. Open to staff and owners."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from typing import Any

from litestar import Controller, Response, get
from litestar.params import FromQuery
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.customers.reads.customer import new_customers
from loyalty_core.earning.reads import active_customers
from loyalty_core.tiers.reads import customers_per_tier, paying_ladder_of
from loyalty_core.usage import UsageReads
from loyalty_core.wallet.branch_totals import figures_by_branch
from loyalty_core.wallet.reads import points_by_day, points_outstanding
from loyalty_portal.access import Cfg, Db, Me
from loyalty_portal.chart import bar_chart
from loyalty_portal.web import render

CURRENT = "Dashboard"
RANGES = (7, 30, 90)
DEFAULT_RANGE = 30


class DashboardController(Controller):
    path = "/"

    @get("/")
    async def dashboard(self, visitor: Me, db: Db, config: Cfg, days: FromQuery[str] = "") -> Response[Any]:
        span = int(days) if days in {str(n) for n in RANGES} else DEFAULT_RANGE
        now = config.clock.now()
        last = now.astimezone(UTC).date()
        first = last - timedelta(days=span - 1)
        shown = await points_by_day(db, visitor.vendor_id, first, last)
        since = datetime.combine(first, time(), UTC)
        return render(
            "dashboard.html",
            visitor=visitor,
            current=CURRENT,
            days=shown,
            span=span,
            ranges=RANGES,
            chart=bar_chart(shown),
            totals={
                field: sum(getattr(d, field) for d in shown)
                for field in ("issued", "earned", "redeemed", "expired", "redemptions")
            },
            branches=await figures_by_branch(db, visitor.vendor_id, first, last),
            new_customers=await new_customers(db, visitor.vendor_id, since, since + timedelta(days=span)),
            active=await active_customers(db, visitor.vendor_id, now),
            outstanding=await points_outstanding(db, visitor.vendor_id),
            usage=await UsageReads(db, config.clock).usage(visitor.vendor_id),
            tiers=await _per_tier(db, visitor.vendor_id, now),
        )


async def _per_tier(db: AsyncSession, vendor_id: int, now: datetime) -> list[tuple[str, int]]:
    """TIER-14: the active customers in each tier of the ladder that applies; none without one."""
    ladder = await paying_ladder_of(db, vendor_id)
    if ladder is None:
        return []
    counts = await customers_per_tier(db, vendor_id, ladder, now)
    return [(rung.name, count) for rung, count in zip(ladder.rungs, counts, strict=True)]
