"""The second factor: a user turns it on for themselves at ``/account/two-factor`` (a QR code and the
key to type, then a code to confirm; the recovery codes shown once), and a user who has it gives a
code at ``/login/code`` after their password (STAFF-6, STAFF-7). When the deployment requires it of
owners, an owner without it is sent to turn it on before any other page (STAFF-8). A user turns it
off on the same page with their password and a code; an owner may not while the deployment requires
it (PORTAL-23)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post

from loyalty_core.errors import ValidationFailed
from loyalty_core.staff.models import Role
from loyalty_core.staff.services.second_factor import SecondFactors, Verdict
from loyalty_core.staff.services.sessions import PortalSessions, Visitor
from loyalty_portal.access import CSRF_AT_SIGN_IN, ENROLMENT, Cfg, Db, Me, count_address
from loyalty_portal.config import PortalConfig
from loyalty_portal.forms import Form
from loyalty_portal.pages.login import anonymous, checked_visitor, session_cookie, signed_out_page
from loyalty_portal.totp import enrolment, new_secret, sealing_context, step_checker
from loyalty_portal.web import ENROL, HOME, LOGIN, Refused, render, see_other

CURRENT = "Two-factor sign-in"
VERDICTS = {Verdict.INVALID: (401, "Invalid code"), Verdict.LOCKED: (429, "Too many attempts")}
OFF_REFUSED = {Verdict.INVALID: (422, "The password or the code is wrong."), Verdict.LOCKED: (429, "Too many attempts")}
REQUIRED_OF_OWNERS = "This service requires owners to use two-factor sign-in: it cannot be turned off."
TURNED_OFF = "Two-factor sign-in is off."


def _sealer(config: PortalConfig) -> Any:
    if config.sealer is None:
        raise Refused(503, "Two-factor sign-in is not available on this service.")
    return config.sealer


class SignInCodeController(Controller):
    path = "/login/code"

    @get("/")
    async def code_form(self, request: Request[Any, Any, Any], db: Db, config: Cfg) -> Any:
        cookie, visitor = await anonymous(request, PortalSessions(db, config.clock, config.passwords))
        if visitor.pending_user_id is None:
            return see_other(LOGIN)
        return signed_out_page("login_code.html", visitor, cookie, config)

    @post("/", opt=CSRF_AT_SIGN_IN)
    async def give_code(self, request: Request[Any, Any, Any], db: Db, config: Cfg) -> Any:
        await count_address(
            request, config, "Too many sign-in attempts from your address. Wait a minute and try again."
        )
        sessions = PortalSessions(db, config.clock, config.passwords)
        visitor = await checked_visitor(request, sessions)
        user_id = visitor.pending_user_id
        if user_id is None:
            return see_other(LOGIN)
        code = str((await request.form()).get("code") or "")[:64]
        checker = step_checker(config.clock, _sealer(config), user_id)
        verdict = await SecondFactors(db, config.clock, config.passwords).verify(user_id, code, checker)
        if verdict != Verdict.ACCEPTED:
            status, message = VERDICTS[verdict]
            return signed_out_page("login_code.html", visitor, None, config, status=status, error=message)
        response = see_other(HOME)
        response.set_cookie(session_cookie(await sessions.start(visitor, user_id), config))
        return response


class TwoFactorController(Controller):
    path = "/account/two-factor"
    opt = ENROLMENT

    @get("/")
    async def show(self, visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        return await _page(visitor, db, config)

    @post("/setup")
    async def set_up(self, visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        assert visitor.user_id is not None  # admitted: signed in
        sealed = _sealer(config).seal(new_secret().encode(), sealing_context(visitor.user_id))
        await SecondFactors(db, config.clock, config.passwords).begin(visitor.user_id, sealed)
        return see_other(ENROL)

    @post("/confirm")
    async def confirm(self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        assert visitor.user_id is not None  # admitted: signed in
        form = await Form.of(request)
        checker = step_checker(config.clock, _sealer(config), visitor.user_id)
        try:
            async with db.begin_nested():
                codes = await SecondFactors(db, config.clock, config.passwords).confirm(
                    visitor.user_id, form.raw.get("code", "")[:64], checker
                )
        except ValidationFailed as refused:
            return await _page(visitor, db, config, status=422, problems=refused.fields, error=refused.message)
        return render("two_factor_codes.html", visitor=visitor, current=CURRENT, codes=codes)

    @post("/off")
    async def turn_off(self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        assert visitor.user_id is not None  # admitted: signed in
        if _required(visitor, config):
            return await _page(visitor, db, config, status=403, error=REQUIRED_OF_OWNERS)
        form = await Form.of(request)
        checker = step_checker(config.clock, _sealer(config), visitor.user_id)
        try:
            async with db.begin_nested():
                verdict = await SecondFactors(db, config.clock, config.passwords).turn_off(
                    visitor.user_id, form.raw.get("password", "")[:1024], form.raw.get("code", "")[:64], checker
                )
        except ValidationFailed as refused:
            return await _page(visitor, db, config, status=422, problems=refused.fields, error=refused.message)
        if verdict != Verdict.ACCEPTED:
            status, message = OFF_REFUSED[verdict]
            return await _page(visitor, db, config, status=status, error=message)
        return see_other(ENROL, flash=TURNED_OFF)


def _required(visitor: Visitor, config: PortalConfig) -> bool:
    """Whether the deployment requires this user to keep the second factor (STAFF-8)."""
    return config.owner_totp_required and visitor.role == Role.OWNER


async def _page(visitor: Visitor, db: Db, config: PortalConfig, **more: Any) -> Response[Any]:
    assert visitor.user_id is not None  # admitted: signed in
    factors = SecondFactors(db, config.clock, config.passwords)
    sealed, confirmed = await factors.secret(visitor.user_id)
    qr = key = None
    if sealed is not None and not confirmed:
        secret = _sealer(config).open(sealed, sealing_context(visitor.user_id)).decode()
        qr, key = enrolment(secret, visitor.email, visitor.vendor_name)
    left = await factors.recovery_left(visitor.user_id) if confirmed else 0
    required = _required(visitor, config)
    return render(
        "two_factor.html",
        visitor=visitor,
        current=CURRENT,
        confirmed=confirmed,
        qr=qr,
        key=key,
        left=left,
        required=required,
        **more,
    )
