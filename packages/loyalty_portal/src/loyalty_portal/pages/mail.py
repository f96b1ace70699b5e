"""Mail: the shop's customers' addresses that bounced or complained, and switching mail back on."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.params import FromQuery

from loyalty_core.passes import reads
from loyalty_core.passes.outbox import Outbox, SuppressionNotFound
from loyalty_portal.access import OWNER_ONLY, Cfg, Db, Me
from loyalty_portal.forms import Form
from loyalty_portal.web import MOUNT_PATH, render, see_other

CURRENT = "Mail"


class MailController(Controller):
    path = "/mail"
    opt = OWNER_ONLY

    @get("/")
    async def suppressed(self, visitor: Me, db: Db, done: FromQuery[str | None] = None) -> Response[Any]:
        rows = await reads.suppressed(db, visitor.vendor_id)
        message = "Mail is switched on again for that address." if done else None
        return render("mail.html", visitor=visitor, current=CURRENT, rows=rows, done=message)

    @post("/switch-on")
    async def switch_on(self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        email = (await Form.of(request)).raw.get("email", "")
        # only an address of the shop's own customers: another shop's suppressions are not its to see
        if not await reads.is_suppressed_for(db, visitor.vendor_id, email):
            raise SuppressionNotFound("None of the shop's customers has this address on the suppression list.")
        await Outbox(db, config.clock).release(visitor.vendor_id, email)
        return see_other(f"{MOUNT_PATH}/mail?done=1")
