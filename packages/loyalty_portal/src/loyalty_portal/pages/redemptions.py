"""Finding a redemption by its code and cancelling it (the points and the stock come back)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Response, get, post
from litestar.params import FromPath, FromQuery

from loyalty_core.error_status import status_of
from loyalty_core.errors import DomainError
from loyalty_core.redemptions.models import shown_status
from loyalty_core.redemptions.reads import redemption
from loyalty_core.redemptions.services import PortalRedemptions
from loyalty_core.wallet.models import Causer, CauserType
from loyalty_portal.access import Cfg, Db, Me
from loyalty_portal.web import portal_path, render, see_other

CURRENT = "Redemptions"


class RedemptionsController(Controller):
    path = "/redemptions"

    @get("/")
    async def find(self, visitor: Me, code: FromQuery[str | None] = None) -> Response[Any]:
        if code and code.strip():
            return see_other(portal_path("redemptions", code.strip().upper()))
        return render("redemptions.html", visitor=visitor, current=CURRENT)

    @get("/{code:str}")
    async def show(
        self, code: FromPath[str], visitor: Me, db: Db, config: Cfg, done: FromQuery[str | None] = None
    ) -> Response[Any]:
        try:
            found = await redemption(db, visitor.vendor_id, code)
        except DomainError as refused:
            status, error = status_of(refused), refused.message
            return render("redemptions.html", status=status, visitor=visitor, current=CURRENT, error=error, code=code)
        message = "The redemption is cancelled; the points are back on the customer's balance." if done else None
        state = shown_status(found, config.clock.now())
        return render("redemption.html", visitor=visitor, current=CURRENT, r=found, state=state, done=message)

    @get("/{code:str}/cancel")
    async def confirm_cancel(self, code: FromPath[str], visitor: Me, db: Db) -> Response[Any]:
        found = await redemption(db, visitor.vendor_id, code)
        return render("redemption_cancel.html", visitor=visitor, current=CURRENT, r=found)

    @post("/{code:str}/cancel")
    async def cancel(self, code: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        found = await redemption(db, visitor.vendor_id, code)
        try:
            async with db.begin_nested():
                await PortalRedemptions(db, config.clock).cancel(
                    visitor.vendor_id,
                    found.confirmation_code,
                    causer=Causer(CauserType.PORTAL_USER, str(visitor.user_id)),
                )
        except DomainError as refused:
            return render(
                "redemption.html",
                status=status_of(refused),
                visitor=visitor,
                current=CURRENT,
                r=found,
                state=shown_status(found, config.clock.now()),
                error=refused.message,
            )
        return see_other(portal_path("redemptions", found.confirmation_code) + "?done=cancelled")
