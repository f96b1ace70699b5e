"""Forms that act once (PORTAL-21): every state-changing request claims its form's one-time key in the
request's transaction before its handler writes, and records where its answer sent the browser; a
second submission of the same form is sent there again and changes nothing.

The app's ``before_request`` hook claims the key (after the router's guard has admitted the visitor
and checked the CSRF token) and its ``after_request`` hook settles the claim with the answer, both
before the request's transaction commits. A refused write (an answer that is not a redirect and says
nothing of a first result) lets the key go, so the form may be sent again. A route whose handler reads
the form as a stream (``CSRF_IN_STREAM``) claims the key itself with :func:`claim`, and a route that
changes nothing, or cannot act twice, says ``REPEATABLE`` in its ``opt``."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from litestar import Request, Response
from litestar.response import Redirect
from litestar.types import AfterRequestHookHandler, BeforeRequestHookHandler
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.staff.services.form_keys import First, FormKeys, minted_for
from loyalty_portal.access import CHECKED_BY_THE_HANDLER, EXPIRED, UNSAFE, admitted, request_session
from loyalty_portal.config import PortalConfig
from loyalty_portal.web import FORM_KEY, Refused, see_other

REPEATABLE = {"repeatable": True}
"""Route ``opt`` of a POST that needs no key: it changes nothing (a preview), or a second one has
nothing left to do (signing in or out)."""
BEING_SENT = "This form is being sent already; reload the page in a moment."


@dataclass(frozen=True, slots=True)
class Claim:
    keys: FormKeys
    vendor_id: int
    session_id: int
    id: int


_CLAIM: ContextVar[Claim | None] = ContextVar("portal_form_claim", default=None)
"""The request's claim, from its ``before_request`` to its ``after_request``: Litestar hands the
latter the answer only, and both run in the request's task."""
_SHOWN_AT: ContextVar[tuple[str, str | None] | None] = ContextVar("portal_form_shown_at", default=None)
"""Where a second submission goes when the first answered in place (:func:`shown_at`)."""


def needs_key(request: Request[Any, Any, Any]) -> bool:
    """Whether the router claims the request's key before its handler runs."""
    opt = request.route_handler.opt
    return request.method in UNSAFE and not opt.get("repeatable") and opt.get("csrf") not in CHECKED_BY_THE_HANDLER


async def claim(
    request: Request[Any, Any, Any], db: AsyncSession, config: PortalConfig, key: object
) -> Response[Any] | None:
    """Claim ``key`` for the request: None when it is new (the handler goes on), the first result's
    redirect when the form was sent before. A missing key, or another session's, is refused as an
    expired form, like a missing CSRF token."""
    visitor = await admitted(request, db, config)
    if not isinstance(key, str) or not minted_for(visitor.csrf_token, key):
        raise Refused(403, EXPIRED)
    keys = FormKeys(db, config.clock)
    got = await keys.claim(visitor.vendor_id, visitor.session_id, key)
    if isinstance(got, First):
        if got.location is None:  # its first use committed part way and has not answered yet
            raise Refused(409, BEING_SENT)
        await keys.show(visitor.session_id, got.flash)
        await db.commit()  # no handler runs, so no page's transaction commits the message
        return see_other(got.location)
    _CLAIM.set(Claim(keys, visitor.vendor_id, visitor.session_id, got))
    return None


def claiming(config: PortalConfig) -> BeforeRequestHookHandler:
    async def before(request: Request[Any, Any, Any]) -> Response[Any] | None:
        _CLAIM.set(None)
        _SHOWN_AT.set(None)
        if not needs_key(request):
            return None
        sent = (await request.form()).get(FORM_KEY)
        return await claim(request, request_session(request.scope, config), config, sent)

    return before


async def _settle(response: Response[Any]) -> Response[Any]:
    claimed = _CLAIM.get()
    if claimed is None:
        return response
    _CLAIM.set(None)
    shown = _SHOWN_AT.get()
    _SHOWN_AT.set(None)
    if isinstance(response, Redirect):
        flash = getattr(response, "flash", None)
        await claimed.keys.settle(claimed.vendor_id, claimed.id, response.url, flash)
        await claimed.keys.show(claimed.session_id, flash)
    elif shown is not None:
        await claimed.keys.settle(claimed.vendor_id, claimed.id, *shown)
    else:
        await claimed.keys.release(claimed.vendor_id, claimed.id)
    return response


settling: AfterRequestHookHandler = _settle
"""The app's ``after_request``: the claim settled with where the answer sends the browser, or let go
when the answer is a refusal."""


def shown_at(response: Response[Any], location: str, flash: str | None = None) -> Response[Any]:
    """A result answered in place (a secret shown once, which is never stored to be shown after a
    redirect): a second submission of its form is sent to ``location`` with ``flash`` instead."""
    _SHOWN_AT.set((location, flash))
    return response
