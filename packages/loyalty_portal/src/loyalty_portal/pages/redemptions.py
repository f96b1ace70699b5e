"""The shop's redemptions: today's and recent ones listed (by status, branch and day), one found by
its code, and cancelling one (the points and the stock come back; a reward already handed over
asks why, PORTAL-19)."""

from __future__ import annotations

from datetime import date
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.params import FromPath, FromQuery

from loyalty_core.bounds import BRANCH_KEY, CANCEL_NOTE
from loyalty_core.error_status import status_of
from loyalty_core.errors import DomainError
from loyalty_core.listing import PER_PAGE
from loyalty_core.redemptions.models import StoredStatus, shown_status
from loyalty_core.redemptions.reads import STATUSES, recent_redemptions, redemption
from loyalty_core.redemptions.services import PortalRedemptions
from loyalty_core.tenancy.reads import TenancyReads
from loyalty_core.wallet.models import Causer, CauserType
from loyalty_portal.access import Cfg, Db, Me
from loyalty_portal.forms import Form
from loyalty_portal.paging import page_number, pager_of
from loyalty_portal.web import portal_path, render, see_other

CURRENT = "Redemptions"
SORTS = {"newest": "Newest first", "oldest": "Oldest first"}
BRANCHES_LISTED = PER_PAGE
"""The branches the filter offers; a shop with more types the key into the URL."""


def _day(raw: str) -> date | None:
    try:
        return date.fromisoformat(raw) if raw else None
    except ValueError:
        return None


class RedemptionsController(Controller):
    path = "/redemptions"

    @get("/")
    async def find(
        self,
        visitor: Me,
        db: Db,
        config: Cfg,
        code: FromQuery[str | None] = None,
        status: FromQuery[str] = "",
        branch: FromQuery[str] = "",
        day: FromQuery[str] = "",
        sort: FromQuery[str] = "",
        page: FromQuery[str] = "",
    ) -> Response[Any]:
        """A code typed in opens its redemption; otherwise a page of the list, filtered (PORTAL-18)."""
        if code and code.strip():
            return see_other(portal_path("redemptions", code.strip().upper()))
        now = config.clock.now()
        status = status if status in STATUSES else ""
        branch = branch[: BRANCH_KEY.max_length or 0]
        when = _day(day.strip())
        sort = sort if sort in SORTS else ""
        found = await recent_redemptions(
            db,
            now,
            visitor.vendor_id,
            status=status or None,
            branch=branch or None,
            day=when,
            oldest_first=sort == "oldest",
            page=page_number(page),
        )
        kept = {"status": status, "branch": branch, "day": when.isoformat() if when else "", "sort": sort}
        branches = await TenancyReads(db, config.clock).branches(visitor.vendor_id, page=1, per_page=BRANCHES_LISTED)
        return render(
            "redemptions.html",
            visitor=visitor,
            current=CURRENT,
            rows=[(row, shown_status(row.redemption, now)) for row in found.items],
            pager=pager_of(found, portal_path("redemptions"), kept),
            filters=kept,
            statuses=STATUSES,
            branches=branches.items,
            sorts=SORTS,
            today=now.date().isoformat(),
            day_refused=bool(day.strip()) and when is None,
        )

    @get("/{code:str}")
    async def show(
        self, code: FromPath[str], visitor: Me, db: Db, config: Cfg, done: FromQuery[str | None] = None
    ) -> Response[Any]:
        try:
            found = await redemption(db, visitor.vendor_id, code)
        except DomainError as refused:
            status, error = status_of(refused), refused.message
            return render("redemption_missing.html", status=status, visitor=visitor, current=CURRENT, error=error)
        message = "The redemption is cancelled; the points are back on the customer's balance." if done else None
        state = shown_status(found, config.clock.now())
        return render("redemption.html", visitor=visitor, current=CURRENT, r=found, state=state, done=message)

    @get("/{code:str}/cancel")
    async def confirm_cancel(self, code: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        found = await redemption(db, visitor.vendor_id, code)
        state = shown_status(found, config.clock.now())
        return render("redemption_cancel.html", visitor=visitor, current=CURRENT, r=found, state=state, problems={})

    @post("/{code:str}/cancel")
    async def cancel(
        self, code: FromPath[str], request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg
    ) -> Response[Any]:
        found = await redemption(db, visitor.vendor_id, code)
        state = shown_status(found, config.clock.now())
        form = await Form.of(request)
        # a reward already handed over does not come back: whoever gives the points back says why
        note = form.text("reason", CANCEL_NOTE, required=state == StoredStatus.USED)
        try:
            form.check()
            async with db.begin_nested():
                await PortalRedemptions(db, config.clock).cancel(
                    visitor.vendor_id,
                    found.confirmation_code,
                    causer=Causer(CauserType.PORTAL_USER, str(visitor.user_id)),
                    note=note,
                )
        except DomainError as refused:
            return render(
                "redemption_cancel.html",
                status=status_of(refused),
                visitor=visitor,
                current=CURRENT,
                r=found,
                state=state,
                problems=form.problems,
                reason=form.raw.get("reason", ""),
                error=refused.message,
            )
        return see_other(portal_path("redemptions", found.confirmation_code) + "?done=cancelled")
