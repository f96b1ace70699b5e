"""Signing in and out. The sign-in form carries the CSRF token of the visitor's anonymous session,
which its handler checks (the route says so: ``CSRF_AT_SIGN_IN``) once the service's per-address
limit has counted the attempt (PORTAL-7); a successful sign-in replaces that session with a new one. Signing out is a
POST like any other, guarded by the router."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.datastructures import Cookie
from litestar.params import FromQuery

from loyalty_core.staff.services.sessions import Outcome, PortalSessions, Visitor, csrf_matches
from loyalty_core.text import MAX_EMAIL_LENGTH
from loyalty_portal.access import (
    COOKIE,
    CSRF_AT_SIGN_IN,
    ENROLMENT,
    EXPIRED,
    Cfg,
    Db,
    Me,
    count_address,
    sent_csrf,
)
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


CODE_PAGE = f"{MOUNT_PATH}/login/code"
DONE = {
    "password": "Your password is set. Sign in with your email and new password.",
}


def _form(visitor: Me, token: str | None, config: Cfg, **context: Any) -> Response[str]:
    return signed_out_page("login.html", visitor, token, config, **context)


def signed_out_page(name: str, visitor: Visitor, token: str | None, config: Cfg, **context: Any) -> Response[str]:
    """A form of someone not signed in, carrying their anonymous session's CSRF token (and its cookie
    when the session is new)."""
    status = context.pop("status", 200)
    page = render(name, status=status, csrf_token=visitor.csrf_token, **context)
    if token is not None:
        page.set_cookie(session_cookie(token, config))
    return page


async def anonymous(request: Request[Any, Any, Any], sessions: PortalSessions) -> tuple[str | None, Visitor]:
    """The visitor's session, a new anonymous one (its token to set as the cookie) when they have none."""
    visitor = await sessions.visitor(request.cookies.get(COOKIE))
    if visitor is not None:
        return None, visitor
    return await sessions.open()


async def checked_visitor(request: Request[Any, Any, Any], sessions: PortalSessions) -> Visitor:
    """The session of a signed-out form's POST, its CSRF token checked (the route's ``CSRF_AT_SIGN_IN``)."""
    visitor = await sessions.visitor(request.cookies.get(COOKIE))
    if visitor is None or not csrf_matches(visitor, await sent_csrf(request)):
        raise Refused(403, EXPIRED)
    return visitor


class LoginController(Controller):
    path = "/"

    @get("/login")
    async def login_form(
        self, request: Request[Any, Any, Any], db: Db, config: Cfg, done: FromQuery[str | None] = None
    ) -> Any:
        token, visitor = await anonymous(request, PortalSessions(db, config.clock, config.passwords))
        if visitor.user_id is not None:
            return see_other(HOME)
        return _form(visitor, token, config, done=DONE.get(done or ""))

    @post("/login", opt={**CSRF_AT_SIGN_IN, **REPEATABLE})
    async def sign_in(self, request: Request[Any, Any, Any], db: Db, config: Cfg) -> Any:
        await count_address(
            request, config, "Too many sign-in attempts from your address. Wait a minute and try again."
        )
        sessions = PortalSessions(db, config.clock, config.passwords)
        visitor = await checked_visitor(request, sessions)
        form = await request.form()
        email, password = str(form.get("email") or ""), str(form.get("password") or "")
        if "\x00" in email or len(email) > MAX_EMAIL_LENGTH:  # no user has such an address; the database is not asked
            return _form(visitor, None, config, status=401, error=MESSAGES[Outcome.INVALID][1])
        if not email or not password:
            return _form(visitor, None, config, status=422, error="Enter your email and password", email=email)
        result = await sessions.sign_in(visitor, email, password)
        if result.outcome in (Outcome.SIGNED_IN, Outcome.CODE_NEEDED) and result.token is not None:
            response = see_other(HOME if result.outcome == Outcome.SIGNED_IN else CODE_PAGE)
            response.set_cookie(session_cookie(result.token, config))
            return response
        status, message = MESSAGES[result.outcome]
        return _form(visitor, None, config, status=status, error=message, email=email)

    @post("/logout", opt={**ENROLMENT, **REPEATABLE})
    async def sign_out(self, visitor: Me, db: Db, config: Cfg) -> Any:
        await PortalSessions(db, config.clock, config.passwords).end(visitor.session_id)
        response = see_other(LOGIN)
        response.set_cookie(ended_cookie(config))
        return response
