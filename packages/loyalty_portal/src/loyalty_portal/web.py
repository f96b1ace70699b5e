"""Rendering pages, the headers every portal answer carries, and how refusals are shown."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import structlog
from jinja2 import Environment, PackageLoader, select_autoescape
from litestar import Request, Response
from litestar.datastructures import MutableScopeHeaders
from litestar.exceptions import HTTPException
from litestar.response import Redirect
from litestar.types import Message, Scope
from markupsafe import Markup, escape

from loyalty_core import bounds
from loyalty_core.error_status import status_of
from loyalty_core.errors import DomainError
from loyalty_core.numbers import euro_amount, euros
from loyalty_core.outages import database_unavailable
from loyalty_core.staff.services.form_keys import mint
from loyalty_core.staff.services.sessions import Visitor
from loyalty_portal.names import customer_name, person_of

MOUNT_PATH = "/portal"
LOGIN = f"{MOUNT_PATH}/login"
ENROL = f"{MOUNT_PATH}/account/two-factor"
log = structlog.get_logger("loyalty.portal")

TEMPLATES = Environment(
    loader=PackageLoader("loyalty_portal", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)


def segment(value: object) -> str:
    """One path segment, every character that could end it or climb out of it encoded (PORTAL-5)."""
    return quote(str(value), safe="")


def portal_path(*segments: object) -> str:
    """An address under the portal from its segments (ids and fixed words), each one encoded: stored
    text never shapes an address (PORTAL-5)."""
    return "/".join([MOUNT_PATH, *(segment(s) for s in segments)])


# a field's ``maxlength`` is the bound the form checks, the API's own declaration
TEMPLATES.globals["bounds"] = bounds
# money is stored in cents and shown and typed in euros, by one pair of helpers (PORTAL-17)
TEMPLATES.filters["euros"] = euros
TEMPLATES.filters["euro_amount"] = euro_amount
TEMPLATES.filters["segment"] = segment
TEMPLATES.filters["customer_name"] = customer_name
TEMPLATES.filters["person"] = person_of
FORM_KEY = "form_key"
"""The hidden field holding a form's one-time key (PORTAL-21)."""


def form_fields(visitor: Visitor) -> Markup:
    """The hidden fields of every state-changing form: the session's CSRF token (PORTAL-3) and a new
    one-time key of this form (PORTAL-21), minted at each render."""
    token = escape(visitor.csrf_token)
    return Markup(
        f'<input type="hidden" name="csrf_token" value="{token}">'
        f'<input type="hidden" name="{FORM_KEY}" value="{escape(mint(visitor.csrf_token))}">'
    )


TEMPLATES.globals["form_fields"] = form_fields

SECURITY_HEADERS: Mapping[str, str] = {
    # pages hold customers' personal data: never stored by a browser or a proxy
    "Cache-Control": "no-store",
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
    ),
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
}

# (label, path, open to staff): the pages that exist, in the navigation's order
NAVIGATION: tuple[tuple[str, str, bool], ...] = (
    ("Dashboard", MOUNT_PATH, True),
    ("Customers", f"{MOUNT_PATH}/customers", True),
    ("Rewards", f"{MOUNT_PATH}/rewards", True),
    ("Redemptions", f"{MOUNT_PATH}/redemptions", True),
    ("Earn rules", f"{MOUNT_PATH}/earn-rules", False),
    ("Campaigns", f"{MOUNT_PATH}/campaigns", False),
    ("Mailings", f"{MOUNT_PATH}/mailings", False),
    ("Tiers", f"{MOUNT_PATH}/tiers", False),
    ("Referrals", f"{MOUNT_PATH}/referrals", False),
    ("Branches", f"{MOUNT_PATH}/branches", False),
    ("Cards", f"{MOUNT_PATH}/cards", False),
    ("API clients", f"{MOUNT_PATH}/clients", False),
    ("Users", f"{MOUNT_PATH}/users", False),
    ("Billing", f"{MOUNT_PATH}/billing", False),
    ("Mail", f"{MOUNT_PATH}/mail", False),
    ("Branding", f"{MOUNT_PATH}/branding", False),
    ("Import", f"{MOUNT_PATH}/import", False),
    ("Export", f"{MOUNT_PATH}/export", False),
    ("Reports", f"{MOUNT_PATH}/reports", False),
    ("Activity", f"{MOUNT_PATH}/activity", False),
)
HOME = MOUNT_PATH
"""Where signing in lands: the dashboard."""


class SignedOut(Exception):
    """No signed-in session: every page sends the browser to the sign-in form."""


class MustEnrol(Exception):
    """An owner signed in without the second factor the deployment requires of owners: every page
    but the enrolment sends them to it (STAFF-8)."""


class Refused(Exception):
    """A request the portal refuses with a page saying why."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, dict(headers or {})


def render(name: str, *, status: int = 200, visitor: Visitor | None = None, **context: Any) -> Response[str]:
    nav = [(label, path) for label, path, staff in NAVIGATION if visitor and (staff or visitor.role == "owner")]
    html = TEMPLATES.get_template(name).render(visitor=visitor, nav=nav, base=MOUNT_PATH, **context)
    return Response(html, status_code=status, media_type="text/html")


class SeeOther(Redirect):
    """A POST's answer (PORTAL-22): the browser is sent to the page showing the result, and ``flash``,
    kept in the server-side session, is shown once there."""

    def __init__(self, path: str, flash: str | None = None) -> None:
        super().__init__(path, status_code=303)
        self.flash = flash


def see_other(path: str, flash: str | None = None) -> Redirect:
    return SeeOther(path, flash)


async def add_security_headers(message: Message, scope: Scope) -> None:
    if message["type"] == "http.response.start":
        headers = MutableScopeHeaders.from_message(message)
        for name, value in SECURITY_HEADERS.items():
            headers[name] = value


def _page(request: Request[Any, Any, Any], status: int, message: str) -> Response[str]:
    visitor = request.scope.get("state", {}).get("visitor")
    return render("error.html", status=status, visitor=visitor, message=message)


def on_signed_out(request: Request[Any, Any, Any], exc: SignedOut) -> Response[Any]:
    return see_other(LOGIN)


def on_must_enrol(request: Request[Any, Any, Any], exc: MustEnrol) -> Response[Any]:
    return see_other(ENROL)


def on_refused(request: Request[Any, Any, Any], exc: Refused) -> Response[str]:
    page = _page(request, exc.status, exc.message)
    page.headers.update(exc.headers)
    return page


def on_domain_error(request: Request[Any, Any, Any], exc: DomainError) -> Response[str]:
    """A refusal of core shows its message with the status the API answers its code with."""
    return _page(request, status_of(exc), exc.message)


def on_http_error(request: Request[Any, Any, Any], exc: HTTPException) -> Response[str]:
    messages = {404: "There is no page here.", 405: "This page does not take that kind of request."}
    status = exc.status_code if 400 <= exc.status_code < 500 else 400
    return _page(request, status, messages.get(status, "The request could not be read."))


RETRY_AFTER_SECONDS = 1
UNAVAILABLE = "The service cannot reach its database just now; nothing was changed. Try again in a moment."


def on_error(request: Request[Any, Any, Any], exc: Exception) -> Response[str]:
    if database_unavailable(exc):  # refused or busy: 503 as the API answers it (PORTAL-8)
        log.warning("portal request found the database unavailable", path=request.url.path, error=type(exc).__name__)
        page = _page(request, 503, UNAVAILABLE)
        page.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return page
    log.exception("portal request failed", path=request.url.path)
    return _page(request, 500, "Something went wrong on our side; nothing was changed.")


EXCEPTION_HANDLERS: dict[Any, Any] = {
    SignedOut: on_signed_out,
    MustEnrol: on_must_enrol,
    Refused: on_refused,
    DomainError: on_domain_error,
    HTTPException: on_http_error,
    Exception: on_error,
}
