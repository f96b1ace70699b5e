"""Who is calling: the admin bearer token (AUTH-9) and vendor tokens (AUTH-1, AUTH-2)."""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from litestar import Request

from loyalty_core.clock import Clock
from loyalty_core.tenancy import errors as te
from loyalty_core.tenancy.access import VendorContext
from loyalty_core.tenancy.token_check import check_token, check_token_with
from loyalty_core.wallet.models import Causer, CauserType
from loyalty_http.access.connection import request_connection
from loyalty_http.access.tokens import TokenCodec, request_claims
from loyalty_http.wire.errors import Unauthenticated

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class AdminPrincipal:
    """The back office; it acts for every vendor."""


ADMIN = AdminPrincipal()

ADMIN_CAUSER = Causer(CauserType.PORTAL_USER, "admin")
"""Who the ledger entries written by the admin API's actions (a merge, a cancel, a gift) name."""


def bearer_token(request: Request[Any, Any, Any]) -> str | None:
    """The token of the first Authorization header, read off the scope's raw list: ``request.headers``
    builds a case-insensitive multidict of every header for this one value (the limiter and the
    authenticator both ask, on every request)."""
    for name, value in request.scope["headers"]:
        if name.lower() == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                return None
            return token.strip()
    return None


def admin_authenticator(admin_token: str) -> Callable[[Request[Any, Any, Any]], Awaitable[AdminPrincipal]]:
    expected = admin_token.encode()

    async def authenticate(request: Request[Any, Any, Any]) -> AdminPrincipal:
        token = bearer_token(request)
        if token is None or not hmac.compare_digest(token.encode(), expected):
            raise Unauthenticated("A valid admin bearer token is required.")
        return ADMIN

    return authenticate


UNATTRIBUTED = (
    te.Unauthenticated,
    te.InvalidClient,
    te.VendorContextRequired,
    te.VendorContextMissing,
    te.VendorPending,
    te.VendorInactive,
    te.VendorSuspended,
    te.VendorDeactivated,
)
"""Refusals meaning the request belongs to no usable vendor: it counts on the calling address
(RATE-5). A scope or subscription refusal still belongs to a usable vendor's window."""


class Limiter(Protocol):
    async def revoke(self, *marks: str) -> None: ...

    async def reattribute(self, request: Request[Any, Any, Any], vendor_id: int | None) -> None: ...


def vendor_authenticator(
    codec: TokenCodec, clock: Clock, limiter: Limiter | None = None
) -> Callable[[Request[Any, Any, Any]], Awaitable[VendorContext]]:
    async def authenticate(request: Request[Any, Any, Any]) -> VendorContext:
        token = bearer_token(request)
        if token is None:
            raise Unauthenticated("A bearer access token is required.")
        claims = request_claims(request.scope, token, codec)
        if claims is None:
            raise Unauthenticated("The access token is unreadable or expired.")
        write = request.scope["method"] not in SAFE_METHODS
        conn = await request_connection(request.scope).reader()
        state = request.scope["state"]
        companion = state.get("companion")
        now = clock.now()
        try:
            if companion is None:
                return await check_token(conn, claims.jti, vendor_id=claims.vendor_id, write=write, now=now)
            caller, state["companion_row"] = await check_token_with(
                conn, claims.jti, companion(request, now), vendor_id=claims.vendor_id, write=write, now=now
            )
            return caller
        except UNATTRIBUTED as refused:
            if limiter is not None:
                if isinstance(refused, te.Unauthenticated):
                    await limiter.revoke(f"jti:{claims.jti}")
                await limiter.reattribute(request, claims.vendor_id)
            raise

    return authenticate


async def nobody(request: Request[Any, Any, Any]) -> None:
    return None
