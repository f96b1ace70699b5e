"""``POST /oauth/token`` (also under ``/api/v1``): RFC 6749 client credentials (AUTH-1).

Credentials come in a form or JSON body, or as HTTP Basic; the answer is the bare RFC 6749 body.
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Any, Literal
from urllib.parse import unquote

import msgspec
from litestar import Controller, Request, post
from litestar.di import NamedDependency

from loyalty_core.tenancy import errors as te
from loyalty_core.tenancy.services import TenancyService
from loyalty_http.access.tokens import TokenCodec
from loyalty_http.config import HttpConfig
from loyalty_http.params import Codec, Config, Tenancy
from loyalty_http.route_options import reads

Text = Annotated[str, msgspec.Meta(max_length=255)]


class TokenRequest(msgspec.Struct):
    grant_type: Literal["client_credentials"]
    client_id: Text | None = None
    client_secret: Text | None = None


class TokenResponse(msgspec.Struct):
    token_type: str
    access_token: str
    expires_in: int


def _basic(request: Request[Any, Any, Any]) -> tuple[str, str] | None:
    header = request.headers.get("authorization", "")
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    client_id, sep, secret = decoded.partition(":")
    return (unquote(client_id), unquote(secret)) if sep else None


async def issue_token(
    request: Request[Any, Any, Any],
    payload: TokenRequest,
    tenancy: TenancyService,
    config: HttpConfig,
    codec: TokenCodec,
) -> TokenResponse:
    credentials = _basic(request) or (payload.client_id, payload.client_secret)
    client_id, secret = credentials
    if not client_id or not secret:
        raise te.InvalidClient("Client credentials are missing.")
    ttl = config.token_ttl_seconds
    client, jti, expires_at = await tenancy.issue_token(client_id, secret, ttl_seconds=ttl)
    token = codec.encode(client_id=client.client_id, vendor_id=client.vendor_id, jti=jti, expires_at=expires_at)
    return TokenResponse(token_type="Bearer", access_token=token, expires_in=ttl)


_OPT = reads(auth="none", body=TokenRequest, limit="address", errors=("INVALID_CLIENT",))


class OAuthController(Controller):
    path = "/oauth/token"

    @post("/", opt=_OPT, status_code=200)
    async def token(
        self,
        request: Request[Any, Any, Any],
        payload: NamedDependency[TokenRequest],
        tenancy: Tenancy,
        config: Config,
        codec: Codec,
    ) -> TokenResponse:
        return await issue_token(request, payload, tenancy, config, codec)


class VersionedOAuthController(OAuthController):
    path = "/api/v1/oauth/token"
