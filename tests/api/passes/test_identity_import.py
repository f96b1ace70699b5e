"""PUT /admin/v1/vendors/{vendor_id}/wallet-identity/certificate: an operator imports a real platform_a
identity (PASS-3): the three PEM parts must fit together, the key is
stored sealed, and the shop's passes are signed with it from then on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text

from loyalty_api.adapters.pass_platforms import WalletPasses, wallet_passes
from loyalty_api.app import create_app
from loyalty_api.settings import Settings
from loyalty_core.db import make_engine
from loyalty_wallet_pass.authority import CertificateAuthority
from loyalty_wallet_pass.identity import SigningIdentity, new_rsa_key, private_key_pem
from loyalty_wallet_pass.platform import LocalPassPlatform
from tests.support.app import ADMIN, ADMIN_TOKEN
from tests.support.customers import register
from tests.support.envelope import details_of, error_of
from tests.support.openssl import pkpass_members, signature_verifies
from tests.support.tenants import make_tenant

Client = AsyncTestClient[Litestar]
OWN_CA = CertificateAuthority.create(team_identifier="REALTEAM42")
"""The operator's real platform, as far as the service can tell: a root the stand-in does not know."""


@pytest.fixture
def passes(settings: Settings) -> WalletPasses:
    assert settings.encryption_key is not None
    return wallet_passes(settings.encryption_key, private_key_pem(new_rsa_key()), LocalPassPlatform())


@pytest.fixture
async def app_client(settings: Settings, passes: WalletPasses) -> AsyncIterator[Client]:
    own = msgspec.structs.replace(settings, admin_token=ADMIN_TOKEN, worker="external")
    async with AsyncTestClient(app=create_app(own, passes=passes)) as client:
        yield client


def _body(identity: SigningIdentity, **override: str) -> dict[str, Any]:
    return {
        "certificate": identity.certificate_pem().decode(),
        "key": identity.private_key_pem().decode(),
        "intermediate": identity.intermediate_pem().decode(),
        **override,
    }


async def test_imported_identity_signs_the_shops_passes(app_client: Client, database_url: str) -> None:
    tenant = await make_tenant(app_client)
    customer = await register(app_client, tenant)
    identity = OWN_CA.issue("pass.example.real")
    response = await app_client.put(
        f"/admin/v1/vendors/{tenant.vendor_id}/wallet-identity/certificate", json=_body(identity), headers=ADMIN
    )
    assert response.status_code == 200, response.text
    assert response.json()["data"] == {"vendor_id": tenant.vendor_id, "state": "issued", "retry_after": None}
    got = await app_client.get(
        f"/api/v1/customers/{customer['id']}/wallet-pass", params={"platform": "platform_a"}, headers=tenant.headers
    )
    assert got.status_code == 200
    assert signature_verifies(pkpass_members(got.content), OWN_CA.root_pem())
    engine = make_engine(database_url)
    try:
        async with engine.connect() as conn:
            sealed = await conn.scalar(
                text("SELECT sealed_key FROM wallet_identities WHERE vendor_id = :v"), {"v": tenant.vendor_id}
            )
    finally:
        await engine.dispose()
    assert b"PRIVATE KEY" not in sealed  # stored encrypted, never as PEM


async def test_parts_that_do_not_fit_are_refused_naming_the_part(app_client: Client) -> None:
    tenant = await make_tenant(app_client)
    identity = OWN_CA.issue("pass.example.real")
    stranger = CertificateAuthority.create().issue("pass.example.other")
    cases = [
        (_body(identity, certificate="not a certificate"), "certificate"),
        (_body(identity, intermediate="-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----"), "intermediate"),
        (_body(identity, key="nonsense"), "key"),
        (_body(identity, key=stranger.private_key_pem().decode()), "key"),
        (_body(identity, intermediate=stranger.intermediate_pem().decode()), "intermediate"),
        ({"certificate": identity.certificate_pem().decode()}, None),
    ]
    for body, field in cases:
        response = await app_client.put(
            f"/admin/v1/vendors/{tenant.vendor_id}/wallet-identity/certificate", json=body, headers=ADMIN
        )
        assert (response.status_code, error_of(response)["code"]) == (422, "VALIDATION_ERROR")
        if field is None:
            assert sorted(details_of(response)) == ["intermediate", "key"]
        else:
            assert list(details_of(response)) == [field]
