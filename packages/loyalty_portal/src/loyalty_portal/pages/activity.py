"""Activity (owners only, PORTAL-15): who did what in the shop, newest first, a page at a time."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from litestar import Controller, Response, get
from litestar.params import FromQuery

from loyalty_core.staff.reads.activity import activity
from loyalty_portal.access import OWNER_ONLY, Cfg, Db, Me
from loyalty_portal.web import Refused, portal_path, render

CURRENT = "Activity"
PAGE = 50


class ActivityController(Controller):
    path = "/activity"
    opt = OWNER_ONLY

    @get("/")
    async def show(
        self, visitor: Me, db: Db, config: Cfg, before: FromQuery[str | None] = None, seen: FromQuery[str] = "0"
    ) -> Response[Any]:
        until = config.clock.now() if before is None else _moment(before)
        shown = (
            int(seen) if seen.isascii() and seen.isdigit() and len(seen) < 7 else 0
        )  # "²" is a digit to isdigit (PORTAL-6)
        found = await activity(db, visitor.vendor_id, before=until, seen=shown, limit=PAGE)
        older = None
        if found.next_before is not None:
            query = urlencode({"before": found.next_before.isoformat(), "seen": found.next_seen})
            older = f"{portal_path('activity')}?{query}"
        return render(
            "activity.html",
            visitor=visitor,
            current=CURRENT,
            lines=found.lines,
            people=found.people,
            older=older,
            paged=before,
        )


def _moment(raw: str) -> datetime:
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise Refused(400, "The page's link is damaged: start again from the newest activity.") from None
    if moment.tzinfo is None:
        raise Refused(400, "The page's link is damaged: start again from the newest activity.")
    return moment
