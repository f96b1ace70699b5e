"""The referral programme (owners only, REFERRAL-5): one form with the programme's five fields,
saved whole through the programme's one writer (``ProgrammeService``, the API's ``PUT``). The
minimum purchase is typed and shown in euros (cents stored); a refused save answers the API's
status with its message and changes nothing."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.params import FromQuery

from loyalty_core.bounds import REFERRAL_CAP, REFERRAL_MIN_PURCHASE, REFERRAL_POINTS
from loyalty_core.errors import DomainError, NotFound
from loyalty_core.numbers import euro_amount
from loyalty_core.referrals.resources import Programme
from loyalty_core.referrals.services import ProgrammeData, ProgrammeService
from loyalty_core.tenancy.services.ceilings import plan_of
from loyalty_portal.access import OWNER_ONLY, Cfg, Db, Me
from loyalty_portal.forms import Form, refused_save
from loyalty_portal.web import MOUNT_PATH, render, see_other

CURRENT = "Referrals"
NEW = {"min_purchase_amount": "0.00", "max_referrals_per_customer": "0", "active": "on"}
"""A shop without a programme sees the API's defaults."""


def _values(programme: Programme) -> dict[str, str]:
    values = {
        "referrer_points": str(programme.referrer_points),
        "referee_points": str(programme.referee_points),
        "min_purchase_amount": euro_amount(programme.min_purchase_amount),
        "max_referrals_per_customer": str(programme.max_referrals_per_customer),
    }
    return values | ({"active": "on"} if programme.active else {})


def programme_of_form(form: Form) -> ProgrammeData | None:
    """The programme typed in, or None (with the form's problems by field) when a field cannot be
    read; an empty minimum or maximum is the API's default, 0."""
    referrer = form.whole("referrer_points", REFERRAL_POINTS, required=True)
    referee = form.whole("referee_points", REFERRAL_POINTS, required=True)
    minimum = form.money("min_purchase_amount", REFERRAL_MIN_PURCHASE)
    cap = form.whole("max_referrals_per_customer", REFERRAL_CAP)
    if form.problems or referrer is None or referee is None:
        return None
    return ProgrammeData(referrer, referee, minimum or 0, cap or 0, form.flag("active"))


async def page(
    db: Db, config: Cfg, visitor: Me, *, status: int = 200, values: dict[str, str] | None = None, **context: Any
) -> Response[str]:
    """The form with ``values`` (the stored programme's, or the defaults, when None)."""
    if values is None:
        try:
            values = _values(await ProgrammeService(db, config.clock).get(visitor.vendor_id))
        except NotFound:
            values = dict(NEW)
    paying = (await plan_of(db, visitor.vendor_id)).feature_referrals
    return render(
        "referrals.html", status=status, visitor=visitor, current=CURRENT, values=values, paying=paying, **context
    )


class ReferralsController(Controller):
    path = "/referrals"
    opt = OWNER_ONLY

    @get("/")
    async def show(self, visitor: Me, db: Db, config: Cfg, done: FromQuery[str | None] = None) -> Response[Any]:
        return await page(db, config, visitor, done="The programme is saved." if done else None)

    @post("/")
    async def save(self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        form = await Form.of(request)
        data = programme_of_form(form)
        try:
            form.check()
            assert data is not None
            async with db.begin_nested():
                await ProgrammeService(db, config.clock).put_programme(visitor.vendor_id, data)
        except DomainError as refused:
            return await page(db, config, visitor, **refused_save(refused, form.raw))
        return see_other(f"{MOUNT_PATH}/referrals?done=1")
