"""Signing in and out. The sign-in form carries the CSRF token of the visitor's anonymous session,
which its handler checks (the route says so: ``CSRF_AT_SIGN_IN``) once the per-address throttle has
counted the attempt; a successful sign-in replaces that session with a new one. Signing out is a
POST like any other, guarded by the router."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.datastructures import Cookie

from loyalty_core.staff.services.sessions import Outcome, PortalSessions, csrf_matches
from loyalty_core.text import MAX_EMAIL_LENGTH
from loyalty_portal.access import ANY_STATE, COOKIE, CSRF_AT_SIGN_IN, EXPIRED, Cfg, Db, Me, Throttles, sent_csrf
from loyalty_portal.once import REPEATABLE
from loyalty_portal.web import HOME, LOGIN, MOUNT_PATH, Refused, render, see_other

MESSAGES = {
    Outcome.INVALID: (401, "Invalid email or password"),
    Outcome.LOCKED: (429, "Too many attempts"),
    Outcome.SHOP_INACTIVE: (403, "This shop's account is not active"),
}


def session_cookie(token: str, config: Cfg) -> Cookie:
    return Cookie(key=COOKIE, value=token, path=MOUNT_PATH, httponly=True, samesite="lax", secure=config.secure_cookies)


def ended_cookie(config: Cfg) -> Cookie:
    return Cookie(
        key=COOKIE,
        value="",
        path=MOUNT_PATH,
        max_age=0,
        httponly=True,
        samesite="lax",
        secure=config.secure_cookies,
    )


def _form(visitor: Me, token: str | None, config: Cfg, **context: Any) -> Response[str]:
    status = context.pop("status", 200)
    page = render("login.html", status=status, csrf_token=visitor.csrf_token, **context)
    if token is not None:
        page.set_cookie(session_cookie(token, config))
    return page


class LoginController(Controller):
    path = "/"

    @get("/login")
    async def login_form(self, request: Request[Any, Any, Any], db: Db, config: Cfg) -> Any:
        sessions = PortalSessions(db, config.clock, config.passwords)
        visitor = await sessions.visitor(request.cookies.get(COOKIE))
        if visitor is not None and visitor.user_id is not None:
            return see_other(HOME)
        token = None
        if visitor is None:
            token, visitor = await sessions.open()
        return _form(visitor, token, config)

    @post("/login", opt={**CSRF_AT_SIGN_IN, **REPEATABLE})
    async def sign_in(self, request: Request[Any, Any, Any], db: Db, config: Cfg, throttle: Throttles) -> Any:
        address = request.client.host if request.client else "unknown"
        if not throttle.allow(address):
            raise Refused(429, "Too many sign-in attempts from your address. Wait a minute and try again.")
        sessions = PortalSessions(db, config.clock, config.passwords)
        visitor = await sessions.visitor(request.cookies.get(COOKIE))
        if visitor is None or not csrf_matches(visitor, await sent_csrf(request)):
            raise Refused(403, EXPIRED)
        form = await request.form()
        email, password = str(form.get("email") or ""), str(form.get("password") or "")
        if "\x00" in email or len(email) > MAX_EMAIL_LENGTH:  # no user has such an address; the database is not asked
            return _form(visitor, None, config, status=401, error=MESSAGES[Outcome.INVALID][1])
        if not email or not password:
            return _form(visitor, None, config, status=422, error="Enter your email and password", email=email)
        result = await sessions.sign_in(visitor, email, password)
        if result.outcome == Outcome.SIGNED_IN and result.token is not None:
            response = see_other(HOME)
            response.set_cookie(session_cookie(result.token, config))
            return response
        status, message = MESSAGES[result.outcome]
        return _form(visitor, None, config, status=status, error=message, email=email)

    @post("/logout", opt={**ANY_STATE, **REPEATABLE})
    async def sign_out(self, visitor: Me, db: Db, config: Cfg) -> Any:
        await PortalSessions(db, config.clock, config.passwords).end(visitor.session_id)
        response = see_other(LOGIN)
        response.set_cookie(ended_cookie(config))
        return response
