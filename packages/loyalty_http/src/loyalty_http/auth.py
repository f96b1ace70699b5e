"""Who is calling: the admin bearer token (back-office contract, section 2) and, per route, the rest."""

from __future__ import annotations

import hmac
from typing import Any

from litestar import Request

from loyalty_http.errors import Unauthenticated


class AdminPrincipal:
    """The back office; it acts for every vendor."""


ADMIN = AdminPrincipal()


def bearer_token(request: Request[Any, Any, Any]) -> str | None:
    header = request.headers.get("authorization")
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def admin_authenticator(admin_token: str):  # type: ignore[no-untyped-def]
    expected = admin_token.encode()

    async def authenticate(request: Request[Any, Any, Any]) -> AdminPrincipal:
        token = bearer_token(request)
        if token is None or not hmac.compare_digest(token.encode(), expected):
            raise Unauthenticated("A valid admin bearer token is required.")
        return ADMIN

    return authenticate


async def nobody(request: Request[Any, Any, Any]) -> None:
    return None
