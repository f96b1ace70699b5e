"""Who is asking: the request's database session, the signed-in visitor with their shop and role,
and the router's CSRF guard of every state-changing request."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import replace
from typing import Any

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.di import NamedDependency
from litestar.handlers.base import BaseRouteHandler
from litestar.types import ASGIApp, Guard, Receive, Scope, Send
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.events.services.transaction import request_transaction
from loyalty_core.passes.reads import shop_header
from loyalty_core.staff.models import Role
from loyalty_core.staff.services.sessions import PortalSessions, Visitor, csrf_matches
from loyalty_portal.config import PortalConfig
from loyalty_portal.web import MustEnrol, Refused, SignedOut, log

COOKIE = "loyalty_portal_session"
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
"""The methods that change something: each carries the session's CSRF token (PORTAL-3)."""
EXPIRED = "This form has expired. Reload the page and try again."
OWNER_ONLY = {"owner_only": True}
"""Route ``opt`` of the pages staff may not open."""
IN_STREAM, AT_SIGN_IN = "in_stream", "sign_in"
CHECKED_BY_THE_HANDLER = frozenset({IN_STREAM, AT_SIGN_IN})
"""The two ways a route's ``opt["csrf"]`` may take the token check from the router; any other
state-changing route is checked by the router before its handler runs."""
CSRF_IN_STREAM = {"owner_only": True, "csrf": IN_STREAM}
"""Route ``opt`` of an owners' upload read as a stream: the handler checks the token, which the form
sends before the file, so the body is never held whole to find it."""
CSRF_AT_SIGN_IN = {"csrf": AT_SIGN_IN}
"""Route ``opt`` of the sign-in form: no one is signed in yet, so the handler checks the token of the
visitor's anonymous session itself, after the per-address throttle has counted the attempt."""
ENROLMENT = {"enrolment": True, "any_state": True}
"""Route ``opt`` of the second factor's own pages and of signing out: open to an owner who must still
turn it on (STAFF-8), and to a shop whose subscription ended (they touch the user's sign-in, not the
shop's data)."""
ANY_STATE = {"any_state": True}
"""Route ``opt`` of a POST a shop whose subscription ended may still make (signing out)."""


SESSION_KEY = "portal_session"
VISITOR_KEY = "visitor"


def request_session(scope: Scope, config: PortalConfig) -> AsyncSession:
    """The request's one session, opened by whichever asks first: the router's CSRF guard or a
    page's ``db``. ``provide_db`` runs its transaction and closes it; ``closing_the_session`` closes
    one that no page asked for."""
    state = scope["state"]
    session: AsyncSession | None = state.get(SESSION_KEY)
    if session is None:
        session = state[SESSION_KEY] = config.sessionmaker()
    return session


async def provide_db(
    request: Request[Any, Any, Any], config: NamedDependency[PortalConfig]
) -> AsyncGenerator[AsyncSession, None]:
    """One session and transaction per request: committed when the page is answered, rolled back
    when the request is refused, so a refused request changes nothing. A commit that recorded
    events wakes the delivery worker, as the API's does (EVENT-7). ``closing_the_session`` closes
    it too, for the refusals that never reach this generator's end."""
    enqueue = config.enqueue_webhooks

    async def on_events() -> None:
        if enqueue is None:
            return
        try:
            await enqueue()
        except Exception as exc:  # the minute's sweep sends them; the committed page stands
            log.warning("waking the webhook worker failed", error=type(exc).__name__)

    session = request_session(request.scope, config)
    try:
        async with request_transaction(session, on_events):
            yield session
    finally:
        request.scope["state"].pop(SESSION_KEY, None)
        await session.close()


def closing_the_session(app: ASGIApp) -> ASGIApp:
    """Middleware: the request's session is closed, its connection given back, before the request ends.

    Litestar takes charge of a generator dependency's end only once all of a page's dependencies are
    resolved: one that refuses the request (``provide_visitor``) leaves ``provide_db`` suspended at its
    ``yield``, its transaction open, until the garbage collector finalizes it. When that came after the
    app had stopped, the connection went back to the disposed engine's pool, which nothing closes, and
    was collected still open. After ``provide_db``'s own end this close has nothing left to do, and an
    abandoned generator's late end finds nothing to roll back."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await app(scope, receive, send)
        finally:
            session: AsyncSession | None = scope["state"].pop(SESSION_KEY, None)
            if session is not None:
                await session.close()

    return middleware


async def sent_csrf(request: Request[Any, Any, Any]) -> str | None:
    header = request.headers.get("x-csrf-token")
    if header:
        return header
    form = await request.form()
    value = form.get("csrf_token")
    return value if isinstance(value, str) else None


async def admitted(request: Request[Any, Any, Any], db: AsyncSession, config: PortalConfig) -> Visitor:
    """The signed-in user of the request, admitted to its route once and remembered for the rest of
    the request: signed out, the browser goes to the sign-in form; staff are refused owners' pages; a
    state-changing request needs the session's CSRF token (unless the route's handler checks it) and
    a shop whose subscription has not ended (unless the route takes any state)."""
    state = request.scope["state"]
    known: Visitor | None = state.get(VISITOR_KEY)
    if known is not None:
        return known
    visitor = await PortalSessions(db, config.clock, config.passwords).visitor(request.cookies.get(COOKIE))
    if visitor is None or visitor.user_id is None:
        raise SignedOut
    # the header names the shop as its cards do, with their logo (PORTAL-10)
    display_name, has_logo = await shop_header(db, visitor.vendor_id)
    visitor = replace(visitor, vendor_name=display_name or visitor.vendor_name, has_logo=has_logo)
    state[VISITOR_KEY] = visitor
    opt = request.route_handler.opt
    if opt.get("owner_only") and visitor.role != Role.OWNER:
        raise Refused(403, "Only the shop's owners may open this page.")
    enrolled = visitor.second_factor or visitor.role != Role.OWNER
    if config.owner_totp_required and not enrolled and not opt.get("enrolment"):
        raise MustEnrol
    if request.method in UNSAFE:
        if opt.get("csrf") not in CHECKED_BY_THE_HANDLER and not csrf_matches(visitor, await sent_csrf(request)):
            raise Refused(403, EXPIRED)
        if visitor.read_only and not opt.get("any_state"):
            raise Refused(403, "The shop's subscription has ended: you can look things up, not change them.")
    return visitor


def guarding_state_changes(config: PortalConfig) -> Guard:
    """The router's guard (PORTAL-3): every state-changing request is admitted, its CSRF token
    checked, before its handler runs, whether or not the handler asks for the visitor. Only a route
    whose ``opt`` names one of ``CHECKED_BY_THE_HANDLER`` leaves the check to its handler."""

    async def guard(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
        if not isinstance(connection, Request) or connection.method not in UNSAFE:
            return
        if handler.opt.get("csrf") not in CHECKED_BY_THE_HANDLER:
            await admitted(connection, request_session(connection.scope, config), config)

    return guard


async def provide_visitor(
    request: Request[Any, Any, Any], db: NamedDependency[AsyncSession], config: NamedDependency[PortalConfig]
) -> Visitor:
    """The signed-in user of the request; signed out, the page redirects to the sign-in form."""
    return await admitted(request, db, config)


def refuse_unreadable(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """A NUL in the path or query names no page (PostgreSQL text cannot hold one): 404, not a 500.
    The router's first guard, so it answers before the visitor is looked up."""
    if "\x00" in connection.url.path or "%00" in connection.scope.get("query_string", b"").decode("latin-1"):
        raise Refused(404, "There is no page here.")


Db = NamedDependency[AsyncSession]
Me = NamedDependency[Visitor]
"""The signed-in user of the request (signed out, the page redirects to the sign-in form)."""
Cfg = NamedDependency[PortalConfig]


async def count_address(request: Request[Any, Any, Any], config: PortalConfig, message: str) -> None:
    """One more post from the client's address against the service's sign-in limit (PORTAL-7):
    sign-in, its second step and the password-reset form share it; over it, 429 with ``message``."""
    wait = await config.sign_in_limit(request) if config.sign_in_limit is not None else None
    if wait is not None:
        raise Refused(429, message, {"Retry-After": str(wait)})
