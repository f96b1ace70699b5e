"""AUTH-1 to AUTH-8, one test per refusal: the token endpoint, tokens, clients and vendor states."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import jwt
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from litestar.types import HTTPScope
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from tests.support.app import ADMIN, JWT_SECRET
from tests.support.envelope import error_of
from tests.support.tenants import admin, make_tenant, token_for

READ = "/api/v1/probe/vendor"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# --- the token endpoint (AUTH-1) ----------------------------------------------------------------


@pytest.mark.parametrize("path", ["/oauth/token", "/api/v1/oauth/token"])
async def test_token_by_form_json_and_basic(client: AsyncTestClient[Litestar], path: str) -> None:
    tenant = await make_tenant(client)
    form = await client.post(
        path,
        data={"grant_type": "client_credentials", "client_id": tenant.client_id, "client_secret": tenant.client_secret},
    )
    as_json = await client.post(
        path,
        json={"grant_type": "client_credentials", "client_id": tenant.client_id, "client_secret": tenant.client_secret},
    )
    basic = base64.b64encode(f"{tenant.client_id}:{tenant.client_secret}".encode()).decode()
    as_basic = await client.post(
        path, data={"grant_type": "client_credentials"}, headers={"Authorization": f"Basic {basic}"}
    )
    for response in (form, as_json, as_basic):
        assert response.status_code == 200, response.text
        body = response.json()
        assert set(body) == {"token_type", "access_token", "expires_in"}
        assert body["token_type"] == "Bearer"
        assert body["expires_in"] == 3600
        claims = jwt.decode(body["access_token"], JWT_SECRET, algorithms=["HS256"])
        assert claims["sub"] == tenant.client_id
        assert claims["vid"] == tenant.vendor_id
        ok = await client.get(READ, headers=bearer(body["access_token"]))
        assert ok.status_code == 200


@pytest.mark.parametrize("secret", ["wrong", ""])
async def test_token_with_wrong_credentials_answers_invalid_client(
    client: AsyncTestClient[Litestar], secret: str
) -> None:
    tenant = await make_tenant(client)
    response = await client.post(
        "/oauth/token",
        json={"grant_type": "client_credentials", "client_id": tenant.client_id, "client_secret": secret},
    )
    assert response.status_code == 401
    assert error_of(response)["code"] == "INVALID_CLIENT"
    unknown = await client.post(
        "/oauth/token", json={"grant_type": "client_credentials", "client_id": "cl_nobody", "client_secret": "x"}
    )
    assert unknown.status_code == 401
    assert error_of(unknown)["code"] == "INVALID_CLIENT"


async def test_token_endpoint_answers_invalid_json(client: AsyncTestClient[Litestar]) -> None:
    """AUTH-1: a body that is not valid JSON answers 400 INVALID_JSON there too."""
    response = await client.post(
        "/oauth/token", content=b'{"grant_type": "client_cred', headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert error_of(response)["code"] == "INVALID_JSON"


async def test_token_endpoint_needs_the_client_credentials_grant_type(client: AsyncTestClient[Litestar]) -> None:
    response = await client.post(
        "/oauth/token", json={"grant_type": "password", "client_id": "a", "client_secret": "b"}
    )
    assert response.status_code == 422
    assert error_of(response)["details"] == {"grant_type": ["validation.in"]}


async def test_revoked_client_gets_no_token(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    await admin(client, "DELETE", f"/admin/v1/clients/{tenant.client_id}")
    response = await client.post(
        "/oauth/token",
        json={"grant_type": "client_credentials", "client_id": tenant.client_id, "client_secret": tenant.client_secret},
    )
    assert response.status_code == 401
    assert error_of(response)["code"] == "INVALID_CLIENT"


# --- AUTH-2, AUTH-3: 401 UNAUTHENTICATED ---------------------------------------------------------------------


async def test_missing_token_answers_unauthenticated(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get(READ)
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHENTICATED"


@pytest.mark.parametrize("header", ["Bearer not-a-jwt", "Bearer ", "Token abc", "Bearer a.b.c"])
async def test_unreadable_token_answers_unauthenticated(client: AsyncTestClient[Litestar], header: str) -> None:
    response = await client.get(READ, headers={"Authorization": header})
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHENTICATED"


async def test_forged_tokens_answer_unauthenticated(client: AsyncTestClient[Litestar]) -> None:
    """Tokens are checked in full: alg none, a wrong key, a missing exp: all 401."""
    tenant = await make_tenant(client)
    claims = jwt.decode(tenant.token, JWT_SECRET, algorithms=["HS256"])
    no_alg = jwt.encode(claims, "", algorithm="none")  # alg none takes no key: PyJWT reads "" as None
    wrong_key = jwt.encode(claims, "another-secret-of-at-least-32-bytes!", algorithm="HS256")
    no_exp = jwt.encode({k: v for k, v in claims.items() if k != "exp"}, JWT_SECRET, algorithm="HS256")
    for forged in (no_alg, wrong_key, no_exp):
        response = await client.get(READ, headers=bearer(forged))
        assert response.status_code == 401
        assert error_of(response)["code"] == "UNAUTHENTICATED"


async def test_expired_token_answers_unauthenticated(
    client: AsyncTestClient[Litestar], test_clock: SettableClock
) -> None:
    """Token lifetime is read from the service clock, so the test clock expires a token."""
    tenant = await make_tenant(client)
    test_clock.freeze(datetime.now(UTC) + timedelta(seconds=3599))
    assert (await client.get(READ, headers=tenant.headers)).status_code == 200
    test_clock.freeze(datetime.now(UTC) + timedelta(seconds=3601))
    response = await client.get(READ, headers=tenant.headers)
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHENTICATED"


async def test_revoked_client_is_refused_on_its_very_next_request(client: AsyncTestClient[Litestar]) -> None:
    """Revocation takes effect at once: a revoked client is refused on its very next request."""
    tenant = await make_tenant(client)
    second_token = await token_for(client, tenant.client_id, tenant.client_secret)
    assert (await client.get(READ, headers=tenant.headers)).status_code == 200
    await admin(client, "DELETE", f"/admin/v1/clients/{tenant.client_id}")
    for token in (tenant.token, second_token):
        response = await client.get(READ, headers=bearer(token))
        assert response.status_code == 401
        assert error_of(response)["code"] == "UNAUTHENTICATED"


async def test_revoked_token_is_refused(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    tenant = await make_tenant(client)
    jti = jwt.decode(tenant.token, JWT_SECRET, algorithms=["HS256"])["jti"]
    async with engine.begin() as conn:
        await conn.execute(text("UPDATE issued_tokens SET revoked = true WHERE jti = :jti"), {"jti": jti})
    response = await client.get(READ, headers=tenant.headers)
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHENTICATED"


# --- AUTH-6, AUTH-7: INVALID_CLIENT, FORBIDDEN, vendor context -------------------------------------------------


async def test_vendorless_client_token_answers_invalid_client(client: AsyncTestClient[Litestar]) -> None:
    """AUTH-7: a client created with no vendor gets tokens; /api/v1 calls answer 401 INVALID_CLIENT."""
    made = await admin(client, "POST", "/admin/v1/clients", {"name": "orphan"})
    assert made["vendor_id"] is None
    token = await token_for(client, made["client_id"], made["client_secret"])
    response = await client.get(READ, headers=bearer(token))
    assert response.status_code == 401
    assert error_of(response)["code"] == "INVALID_CLIENT"


async def test_client_without_the_grant_answers_invalid_client(client: AsyncTestClient[Litestar]) -> None:
    """AUTH-7: a token of a client whose grant_types no longer include client_credentials."""
    tenant = await make_tenant(client)
    patched = await admin(client, "PATCH", f"/admin/v1/clients/{tenant.client_id}", {"grant_types": ["other"]})
    assert patched["grant_types"] == ["other"]
    response = await client.get(READ, headers=tenant.headers)
    assert response.status_code == 401
    assert error_of(response)["code"] == "INVALID_CLIENT"
    refused = await client.post(
        "/oauth/token",
        json={"grant_type": "client_credentials", "client_id": tenant.client_id, "client_secret": tenant.client_secret},
    )
    assert refused.status_code == 401
    assert error_of(refused)["code"] == "INVALID_CLIENT"


async def test_token_without_write_scope_is_forbidden_to_write(client: AsyncTestClient[Litestar]) -> None:
    """AUTH-6: a token without write gets 403 FORBIDDEN on POST, PUT, PATCH and DELETE."""
    tenant = await make_tenant(client, credentials={"scopes": ["read"]})
    assert (await client.get(READ, headers=tenant.headers)).status_code == 200
    response = await client.post(READ, json={"name": "x"}, headers=tenant.headers)
    assert response.status_code == 403
    assert error_of(response)["code"] == "FORBIDDEN"


async def test_token_without_read_scope_is_forbidden_to_read(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client, credentials={"scopes": ["write"]})
    response = await client.get(READ, headers=tenant.headers)
    assert response.status_code == 403
    assert error_of(response)["code"] == "FORBIDDEN"
    assert (await client.post(READ, json={"name": "x"}, headers=tenant.headers)).status_code == 201


async def test_token_whose_vendor_row_is_gone_answers_vendor_context_missing(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """TENANCY-1: a token whose vendor row no longer exists answers 500 VENDOR_CONTEXT_MISSING."""
    tenant = await make_tenant(client)
    async with engine.begin() as conn:
        await conn.execute(text("DELETE FROM vendors WHERE id = :id"), {"id": tenant.vendor_id})
    response = await client.get(READ, headers=tenant.headers)
    assert response.status_code == 500
    assert error_of(response)["code"] == "VENDOR_CONTEXT_MISSING"


async def test_platform_client_answers_vendor_context_required(client: AsyncTestClient[Litestar]) -> None:
    """AUTH-7: vendor-scoped calls with a vendor-less token of a platform client."""
    made = await admin(client, "POST", "/admin/v1/clients", {"name": "platform", "platform": True})
    assert made["platform"] is True
    token = await token_for(client, made["client_id"], made["client_secret"])
    response = await client.get(READ, headers=bearer(token))
    assert response.status_code == 400
    assert error_of(response)["code"] == "VENDOR_CONTEXT_REQUIRED"


# --- AUTH-4, AUTH-5: vendor account states --------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "code"),
    [("pending", "VENDOR_PENDING"), ("inactive", "VENDOR_INACTIVE"), ("deactivated", "VENDOR_DEACTIVATED")],
)
async def test_vendor_state_refuses_reads_and_writes(client: AsyncTestClient[Litestar], status: str, code: str) -> None:
    tenant = await make_tenant(client)
    await admin(client, "PATCH", f"/admin/v1/vendors/{tenant.vendor_id}", {"status": status})
    for response in (
        await client.get(READ, headers=tenant.headers),
        await client.post(READ, json={"name": "x"}, headers=tenant.headers),
    ):
        assert response.status_code == 403
        assert error_of(response)["code"] == code


@pytest.mark.parametrize("grace", [None, "2000-01-01T00:00:00Z"])
async def test_suspended_past_grace_refuses_reads_as_well(client: AsyncTestClient[Litestar], grace: str | None) -> None:
    """AUTH-4: suspended with no grace, or one in the past, is past its grace."""
    tenant = await make_tenant(client, vendor={"status": "suspended", "suspended_grace_until": grace})
    for response in (
        await client.get(READ, headers=tenant.headers),
        await client.post(READ, json={"name": "x"}, headers=tenant.headers),
    ):
        assert response.status_code == 403
        assert error_of(response)["code"] == "VENDOR_SUSPENDED"


async def test_suspended_within_grace_still_works(client: AsyncTestClient[Litestar], test_clock: SettableClock) -> None:
    tenant = await make_tenant(client, vendor={"status": "suspended", "suspended_grace_until": "2040-06-01T00:00:00Z"})
    test_clock.freeze(datetime(2040, 5, 31, 23, 59, tzinfo=UTC))
    assert (await client.get(READ, headers=tenant.headers)).status_code == 401  # the token expired long before
    token = await token_for(client, tenant.client_id, tenant.client_secret)
    assert (await client.get(READ, headers=bearer(token))).status_code == 200
    assert (await client.post(READ, json={"name": "x"}, headers=bearer(token))).status_code == 201
    test_clock.freeze(datetime(2040, 6, 1, 0, 0, tzinfo=UTC))
    response = await client.get(READ, headers=bearer(token))
    assert error_of(response)["code"] == "VENDOR_SUSPENDED"


async def test_subscription_expired_refuses_writes_only(client: AsyncTestClient[Litestar]) -> None:
    """AUTH-5: SUBSCRIPTION_EXPIRED refuses writes only, so a GET never sees it."""
    tenant = await make_tenant(client, vendor={"subscription_ends_at": "2001-01-01T00:00:00Z"})
    read = await client.get(READ, headers=tenant.headers)
    assert read.status_code == 200
    assert read.json()["data"]["vendor_id"] == tenant.vendor_id
    write = await client.post(READ, json={"name": "x"}, headers=tenant.headers)
    assert write.status_code == 403
    assert error_of(write)["code"] == "SUBSCRIPTION_EXPIRED"


async def test_default_branch_is_carried_by_the_credential(client: AsyncTestClient[Litestar]) -> None:
    """AUTH-10: a credential may carry a default branch."""
    tenant = await make_tenant(client)
    await admin(
        client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}/branches", {"external_id": "AMS-1", "name": "Amsterdam"}
    )
    made = await admin(
        client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}/clients", {"name": "till", "default_branch": "AMS-1"}
    )
    assert made["default_branch"] == "AMS-1"
    token = await token_for(client, made["client_id"], made["client_secret"])
    response = await client.get(READ, headers=bearer(token))
    assert response.json()["data"]["default_branch"] == "AMS-1"


# --- AUTH-8: order of checks ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "content_type", "status", "code"),
    [
        (b"name=x", "text/plain", 415, "UNSUPPORTED_MEDIA_TYPE"),
        (b'{"name": ', "application/json", 400, "INVALID_JSON"),
        (b'{"name":"x"}', "application/x-www-form-urlencoded", 422, "VALIDATION_ERROR"),
    ],
)
@pytest.mark.parametrize("authorization", [None, "Bearer garbage"])
async def test_body_answers_come_before_the_token_check(
    client: AsyncTestClient[Litestar],
    content: bytes,
    content_type: str,
    status: int,
    code: str,
    authorization: str | None,
) -> None:
    headers: dict[str, Any] = {"Content-Type": content_type}
    if authorization:
        headers["Authorization"] = authorization
    response = await client.post(READ, content=content, headers=headers)
    assert response.status_code == status
    assert error_of(response)["code"] == code


async def test_field_validation_comes_after_the_token_check(client: AsyncTestClient[Litestar]) -> None:
    response = await client.post(READ, json={"name": ""})
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHENTICATED"


async def test_admin_token_is_no_vendor_token(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get(READ, headers=ADMIN)
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHENTICATED"


def test_a_verified_token_is_kept_but_its_expiry_is_judged_every_time() -> None:
    """The codec keeps a verified token's claims (a till reuses one token for an hour) and still
    refuses it once its exp has passed on the service clock; a token differing in one signature
    character is verified afresh and refused."""
    from datetime import UTC, datetime, timedelta

    from loyalty_core.clock import SettableClock
    from loyalty_http.access.tokens import TokenCodec

    clock = SettableClock()
    start = datetime(2034, 1, 1, tzinfo=UTC)
    clock.freeze(start)
    codec = TokenCodec("k" * 32, clock)
    token = codec.encode(client_id="cl_a", vendor_id=7, jti="j1", expires_at=start + timedelta(hours=1))
    first = codec.decode(token)
    assert first is not None
    assert (first.client_id, first.vendor_id, first.jti) == ("cl_a", 7, "j1")
    assert codec.decode(token) is first
    tampered = token[:-2] + ("A" if token[-2] != "A" else "B") + token[-1]
    assert codec.decode(tampered) is None
    clock.freeze(start + timedelta(hours=1))
    assert codec.decode(token) is None


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ([], None),
        ([(b"authorization", b"Bearer abc")], "abc"),
        ([(b"authorization", b"bearer  abc ")], "abc"),
        ([(b"Authorization", b"BEARER abc")], "abc"),
        ([(b"authorization", b"Bearer ")], None),
        ([(b"authorization", b"")], None),
        ([(b"authorization", b"Basic abc")], None),
        ([(b"x-other", b"Bearer no"), (b"authorization", b"Bearer one"), (b"authorization", b"Bearer two")], "one"),
    ],
)
def test_the_bearer_token_is_read_off_the_first_authorization_header(
    headers: list[tuple[bytes, bytes]], expected: str | None
) -> None:
    """Read off the scope's raw header list (not a multidict built per request): the first
    Authorization header, its scheme in any case, the token trimmed; anything else is no token."""
    from litestar import Request

    from loyalty_http.access.auth import bearer_token

    # a partial scope on purpose: the header list is all bearer_token reads
    request: Request[Any, Any, Any] = Request(cast("HTTPScope", {"type": "http", "headers": headers}))
    assert bearer_token(request) == expected
