"""The dashboard, the page a user lands on (DASHBOARD-1, DASHBOARD-2): points issued, redeemed and
expired per day over 30 days, active customers, points outstanding and this month's transactions
against the plan. Open to staff and owners."""

from __future__ import annotations

from datetime import UTC, timedelta
from typing import Any

from litestar import Controller, Response, get

from loyalty_core.earning.reads import active_customers
from loyalty_core.usage import UsageReads
from loyalty_core.wallet.reads import points_by_day, points_outstanding
from loyalty_portal.access import Cfg, Db, Me
from loyalty_portal.chart import bar_chart
from loyalty_portal.web import render

CURRENT = "Dashboard"
DAYS = 30


class DashboardController(Controller):
    path = "/"

    @get("/")
    async def dashboard(self, visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        now = config.clock.now()
        last = now.astimezone(UTC).date()
        days = await points_by_day(db, visitor.vendor_id, last - timedelta(days=DAYS - 1), last)
        return render(
            "dashboard.html",
            visitor=visitor,
            current=CURRENT,
            days=days,
            chart=bar_chart(days),
            totals={
                "issued": sum(d.issued for d in days),
                "redeemed": sum(d.redeemed for d in days),
                "expired": sum(d.expired for d in days),
            },
            active=await active_customers(db, visitor.vendor_id, now),
            outstanding=await points_outstanding(db, visitor.vendor_id),
            usage=await UsageReads(db, config.clock).usage(visitor.vendor_id),
        )
