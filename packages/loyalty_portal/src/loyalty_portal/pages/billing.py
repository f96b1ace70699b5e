"""Billing (owners only): the shop's plan, this month's usage against each limit, choosing
another of the plans offered (PLAN-3), the days a purchase's points wait (PENDING-1) and what a point is
worth for the liability report (LIABILITY-5)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.params import FromQuery

from loyalty_core.bounds import PENDING_DAYS, POINT_VALUE
from loyalty_core.error_status import status_of
from loyalty_core.errors import DomainError
from loyalty_core.numbers import row_id_of
from loyalty_core.tenancy.services import TenancyService
from loyalty_core.tenancy.services.ceilings import plan_of
from loyalty_core.usage import PlanChoice, Usage
from loyalty_portal.access import OWNER_ONLY, Cfg, Db, Me
from loyalty_portal.forms import Form, field_problems
from loyalty_portal.web import MOUNT_PATH, render, see_other

CURRENT = "Billing"
DONE = {
    "1": "The shop is on its new plan.",
    "value": "The point value is saved.",
    "pending": "The pending days are saved.",
}


def meters_of(usage: Usage) -> list[dict[str, Any]]:
    """Each limit as the page shows it: what is used, the limit (0: unlimited) and, for the
    transactions, the hard limit the overage buffer allows."""
    hard = usage.max_transactions + usage.max_transactions * usage.overage_percent // 100
    return [
        {"label": "Transactions this month", "used": usage.transactions, "limit": usage.max_transactions, "hard": hard},
        {"label": "Customers", "used": usage.customers, "limit": usage.max_customers, "hard": usage.max_customers},
        {"label": "Active rewards", "used": usage.rewards, "limit": usage.max_rewards, "hard": usage.max_rewards},
        {"label": "Campaigns", "used": usage.campaigns, "limit": usage.max_campaigns, "hard": usage.max_campaigns},
        {"label": "Branches", "used": usage.locations, "limit": usage.max_locations, "hard": usage.max_locations},
    ]


async def page(db: Db, config: Cfg, visitor: Me, *, status: int = 200, **context: Any) -> Response[str]:
    choice = PlanChoice(db, config.clock)
    usage = await choice.usage(visitor.vendor_id)
    vendor = await TenancyService(db, config.clock).get_vendor(visitor.vendor_id)
    return render(
        "billing.html",
        status=status,
        visitor=visitor,
        current=CURRENT,
        plan=await plan_of(db, visitor.vendor_id),
        usage=usage,
        meters=meters_of(usage),
        plans=await choice.selectable_plans(),
        vendor=vendor,
        pending_days=vendor.pending_days,
        **context,
    )


class BillingController(Controller):
    path = "/billing"
    opt = OWNER_ONLY

    @get("/")
    async def show(self, visitor: Me, db: Db, config: Cfg, done: FromQuery[str | None] = None) -> Response[Any]:
        return await page(db, config, visitor, done=DONE.get(done or ""))

    @post("/plan")
    async def choose(self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        form = await Form.of(request)
        raw = form.raw.get("plan_id", "")
        try:
            async with db.begin_nested():
                await PlanChoice(db, config.clock).choose(visitor.vendor_id, row_id_of(raw) or 0)
        except DomainError as refused:
            return await page(db, config, visitor, status=status_of(refused), error=refused.message)
        return see_other(f"{MOUNT_PATH}/billing?done=1")

    @post("/point-value")
    async def point_value(self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        """What one point is worth in thousandths of a cent, as the API's PATCH sets it (LIABILITY-5)."""
        form = await Form.of(request)
        value = form.whole("point_value_millicents", POINT_VALUE, required=True)
        if form.problems or value is None:
            return await page(db, config, visitor, status=422, problems=form.problems, typed=form.raw)
        await TenancyService(db, config.clock).patch_vendor(visitor.vendor_id, {"point_value_millicents": value})
        return see_other(f"{MOUNT_PATH}/billing?done=value")

    @post("/pending")
    async def pending(self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        """PENDING-1: the setting as the admin API's ``PATCH`` writes it, within the same bounds."""
        form = await Form.of(request)
        days = form.whole("pending_days", PENDING_DAYS, required=True)
        try:
            form.check()
            async with db.begin_nested():
                await TenancyService(db, config.clock).patch_vendor(visitor.vendor_id, {"pending_days": days})
        except DomainError as refused:
            problems = field_problems(refused)
            return await page(db, config, visitor, status=status_of(refused), error=refused.message, problems=problems)
        return see_other(f"{MOUNT_PATH}/billing?done=pending")
