"""GET /api/v1/customers/{customer}/wallet-pass through the composed service, with the stand-in
platform: the bytes returned verify with openssl against the stand-in's root (PASS-1 to
PASS-3)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import httpx
import msgspec
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from litestar import Litestar
from litestar.testing import AsyncTestClient

from loyalty_api.adapters.pass_platforms import WalletPasses, shop_id, wallet_passes
from loyalty_api.app import create_app
from loyalty_api.settings import Settings
from loyalty_core.db import make_engine
from loyalty_wallet_pass.google import read_save_link
from loyalty_wallet_pass.identity import new_rsa_key, private_key_pem
from loyalty_wallet_pass.platform import LocalPassPlatform
from tests.support.app import ADMIN, ADMIN_TOKEN
from tests.support.customers import register
from tests.support.ladders import TIERS_PLAN, put_ladder, qualify
from tests.support.openssl import pkpass_members, signature_verifies
from tests.support.tenants import Tenant, admin, make_tenant

ISSUER_KEY = new_rsa_key()


@pytest.fixture
def platform() -> LocalPassPlatform:
    return LocalPassPlatform()


@pytest.fixture
def passes(settings: Settings, platform: LocalPassPlatform) -> WalletPasses:
    assert settings.encryption_key is not None
    return wallet_passes(settings.encryption_key, private_key_pem(ISSUER_KEY), platform)


@pytest.fixture
async def app_client(settings: Settings, passes: WalletPasses) -> AsyncIterator[AsyncTestClient[Litestar]]:
    own = msgspec.structs.replace(settings, admin_token=ADMIN_TOKEN, worker="external")
    async with AsyncTestClient(app=create_app(own, passes=passes)) as client:
        yield client


async def _pass(
    client: AsyncTestClient[Litestar], tenant: Tenant, customer_id: object, platform: str = "platform_a"
) -> httpx.Response:
    return await client.get(
        f"/api/v1/customers/{customer_id}/wallet-pass", params={"platform": platform}, headers=tenant.headers
    )


async def test_platform_a_pass_verifies_with_openssl(
    app_client: AsyncTestClient[Litestar], platform: LocalPassPlatform
) -> None:
    """PASS-1: platform_a answers the signed .pkpass itself, attachment, its media type; the exact
    bytes verify against the stand-in's root and every manifest hash matches."""
    tenant = await make_tenant(app_client)
    customer = await register(app_client, tenant, first_name="Ann", email="ann@example.com")
    response = await _pass(app_client, tenant, customer["id"])
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/vnd.apple.pkpass"
    assert response.headers["content-disposition"].startswith("attachment;")
    files = pkpass_members(response.content)
    assert signature_verifies(files, platform.authority.root_pem())
    manifest = json.loads(files["manifest.json"])
    assert manifest == {
        n: hashlib.sha1(b).hexdigest() for n, b in files.items() if n not in ("manifest.json", "signature")
    }
    pass_json = json.loads(files["pass.json"])
    assert pass_json["barcodes"][0]["message"] == customer["loyalty_card_code"]
    assert pass_json["passTypeIdentifier"] == platform.pass_type_identifier(shop_id(tenant.vendor_id))


async def test_one_flipped_manifest_byte_fails_verification(
    app_client: AsyncTestClient[Litestar], platform: LocalPassPlatform
) -> None:
    """PASS-1, negative: the signature covers the manifest's exact bytes."""
    tenant = await make_tenant(app_client)
    customer = await register(app_client, tenant, first_name="Bo")
    files = pkpass_members((await _pass(app_client, tenant, customer["id"])).content)
    flipped = bytearray(files["manifest.json"])
    flipped[5] ^= 0x01
    assert not signature_verifies({**files, "manifest.json": bytes(flipped)}, platform.authority.root_pem())


async def test_identity_is_asked_once_at_vendor_creation(
    app_client: AsyncTestClient[Litestar], platform: LocalPassPlatform
) -> None:
    """PASS-3: requested when the shop is created; passes reuse it without asking again."""
    tenant = await make_tenant(app_client)
    customer = await register(app_client, tenant)
    for _ in range(3):
        assert (await _pass(app_client, tenant, customer["id"])).status_code == 200
    assert [r.shop_id for r in platform.requests].count(shop_id(tenant.vendor_id)) == 1


async def test_platform_b_answers_a_save_link(app_client: AsyncTestClient[Litestar]) -> None:
    """PASS-2: platform_b answers JSON { data: { save_url } }; the JWT verifies with the issuer key."""
    tenant = await make_tenant(app_client)
    customer = await register(app_client, tenant, first_name="Cas")
    response = await _pass(app_client, tenant, customer["id"], "platform_b")
    assert response.status_code == 200
    url = response.json()["data"]["save_url"]
    public = ISSUER_KEY.public_key()
    assert isinstance(public, rsa.RSAPublicKey)
    claims = read_save_link(url, public)
    assert claims["payload"]["loyaltyObjects"][0]["accountId"] == customer["loyalty_card_code"]


async def test_bad_platform_is_a_validation_error(app_client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(app_client)
    customer = await register(app_client, tenant)
    for bad in ("platform_c", ""):
        response = await _pass(app_client, tenant, customer["id"], bad)
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "VALIDATION_ERROR"
        assert "platform" in response.json()["error"]["details"]


async def _script(client: AsyncTestClient[Litestar], vendor_id: int, outcome: str) -> dict[str, object]:
    response = await client.put(
        f"/admin/v1/vendors/{vendor_id}/wallet-identity", json={"outcome": outcome}, headers=ADMIN
    )
    assert response.status_code == 200, response.text
    data: dict[str, object] = response.json()["data"]
    return data


async def test_busy_platform_503_until_issued_asked_once_a_minute(
    app_client: AsyncTestClient[Litestar], platform: LocalPassPlatform
) -> None:
    """PASS-3: busy -> 503 PLATFORM_A_WALLET_UNAVAILABLE with Retry-After (at most 60);
    an earlier retry gets the same answer without asking; after the minute the service asks again
    and, the script being the stand-in's next answer only, the shop's identity is issued;
    platform_b is not affected."""
    tenant = await make_tenant(app_client)
    customer = await register(app_client, tenant)
    start = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=5)  # tokens stay valid
    await admin(app_client, "PUT", "/admin/v1/test-clock", {"now": start.isoformat()})
    try:
        assert (await _script(app_client, tenant.vendor_id, "busy"))["state"] == "busy"
        asked = len(platform.requests)
        await admin(app_client, "PUT", "/admin/v1/test-clock", {"now": (start + timedelta(seconds=20)).isoformat()})
        response = await _pass(app_client, tenant, customer["id"])
        assert response.status_code == 503
        assert response.json()["error"]["code"] == "PLATFORM_A_WALLET_UNAVAILABLE"
        assert response.headers["retry-after"] == "40"
        assert len(platform.requests) == asked
        assert (await _pass(app_client, tenant, customer["id"], "platform_b")).status_code == 200
        assert (await _pass(app_client, tenant, customer["id"])).status_code == 503  # still inside the minute
        await admin(app_client, "PUT", "/admin/v1/test-clock", {"now": (start + timedelta(seconds=60)).isoformat()})
        assert (await _pass(app_client, tenant, customer["id"])).status_code == 200
        assert len(platform.requests) == asked + 1
    finally:
        await app_client.delete("/admin/v1/test-clock", headers=ADMIN)


async def test_refused_stays_503_until_admin_retry(
    app_client: AsyncTestClient[Litestar], platform: LocalPassPlatform
) -> None:
    """PASS-3: after a refusal 503 with Retry-After 3600 and no new ask, however long
    one waits; the admin retry (always accepted) asks again, and the stand-in, scripted for its next
    answer only, issues."""
    tenant = await make_tenant(app_client)
    customer = await register(app_client, tenant)
    assert (await _script(app_client, tenant.vendor_id, "refused"))["state"] == "refused"
    asked = len(platform.requests)
    for _ in range(2):
        response = await _pass(app_client, tenant, customer["id"])
        assert response.status_code == 503
        assert response.headers["retry-after"] == "3600"
    assert len(platform.requests) == asked
    retry = await app_client.post(f"/admin/v1/vendors/{tenant.vendor_id}/wallet-identity/retry", headers=ADMIN)
    assert retry.status_code == 202
    assert retry.json()["data"]["state"] == "issued"
    assert (await _pass(app_client, tenant, customer["id"])).status_code == 200


async def test_merged_is_deactivated_anonymized_is_not_found(app_client: AsyncTestClient[Litestar]) -> None:
    """Errors: 422 CUSTOMER_DEACTIVATED for a merged customer only; 404 CUSTOMER_NOT_FOUND for an
    anonymized one; a deactivated (not merged) customer still gets its pass."""
    tenant = await make_tenant(app_client)
    kept, closed, gone, paused = [await register(app_client, tenant) for _ in range(4)]
    base = f"/admin/v1/vendors/{tenant.vendor_id}/customers"
    await admin(app_client, "POST", f"{base}/{closed['id']}/merge", {"into_customer_id": kept["id"]})
    await admin(app_client, "POST", f"{base}/{gone['id']}/anonymize")
    await admin(app_client, "POST", f"{base}/{paused['id']}/deactivate")
    for platform in ("platform_a", "platform_b"):
        merged = await _pass(app_client, tenant, closed["id"], platform)
        assert (merged.status_code, merged.json()["error"]["code"]) == (422, "CUSTOMER_DEACTIVATED")
        anonymized = await _pass(app_client, tenant, gone["id"], platform)
        assert (anonymized.status_code, anonymized.json()["error"]["code"]) == (404, "CUSTOMER_NOT_FOUND")
        assert (await _pass(app_client, tenant, paused["id"], platform)).status_code == 200


async def test_no_active_card_is_a_validation_error_on_the_card(app_client: AsyncTestClient[Litestar]) -> None:
    """A customer with no active card: 422 VALIDATION_ERROR on loyalty_card_code."""
    tenant = await make_tenant(app_client)
    customer = await register(app_client, tenant)
    code = customer["loyalty_card_code"]
    await admin(
        app_client,
        "PATCH",
        f"/admin/v1/vendors/{tenant.vendor_id}/customers/{customer['id']}/identifiers/{code}",
        {"active": False},
    )
    response = await _pass(app_client, tenant, customer["id"])
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"
    assert list(response.json()["error"]["details"]) == ["loyalty_card_code"]


async def test_another_vendors_customer_is_not_found(app_client: AsyncTestClient[Litestar]) -> None:
    mine, theirs = await make_tenant(app_client), await make_tenant(app_client)
    customer = await register(app_client, theirs)
    response = await _pass(app_client, mine, customer["id"])
    assert (response.status_code, response.json()["error"]["code"]) == (404, "CUSTOMER_NOT_FOUND")


async def test_the_pass_shows_the_tier_held(app_client: AsyncTestClient[Litestar], database_url: str) -> None:
    """TIER-13: the pass shows the name of the tier the customer holds now."""
    tenant = await make_tenant(app_client, plan=TIERS_PLAN)
    customer = await register(app_client, tenant, first_name="Di")
    engine = make_engine(database_url)
    try:
        await put_ladder(engine, tenant.vendor_id)
        await qualify(engine, tenant.vendor_id, customer["id"], datetime.now(UTC).date().replace(day=1), 6000, 60)
    finally:
        await engine.dispose()
    files = pkpass_members((await _pass(app_client, tenant, customer["id"])).content)
    fields = json.loads(files["pass.json"])["storeCard"]["secondaryFields"]
    assert (fields[1]["key"], fields[1]["value"]) == ("tier", "Gold")
