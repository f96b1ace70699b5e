"""Shared by the wallet-pass tests: one stand-in platform (its CA takes a moment to make), a shop's
identity issued by it, a platform_b issuer and a card."""

from __future__ import annotations

import pytest

from loyalty_wallet_pass.authority import CertificateAuthority
from loyalty_wallet_pass.card import PassBranding, PassCard
from loyalty_wallet_pass.google import SaveLinkIssuer
from loyalty_wallet_pass.identity import SigningIdentity, new_rsa_key


@pytest.fixture(scope="session")
def authority() -> CertificateAuthority:
    return CertificateAuthority.create()


@pytest.fixture(scope="session")
def identity(authority: CertificateAuthority) -> SigningIdentity:
    return authority.issue("pass.local.loyalty.v1")


@pytest.fixture(scope="session")
def issuer() -> SaveLinkIssuer:
    return SaveLinkIssuer(
        issuer_id="3388000000012345678",
        service_account_email="wallet@loyalty-local.iam.gserviceaccount.com",
        private_key=new_rsa_key(),
    )


@pytest.fixture
def card() -> PassCard:
    return PassCard(
        serial_number="v1-c7",
        card_code="AB12CD34",
        holder_name="Anne de Vries",
        balance=1250,
        branding=PassBranding(shop_name="Bakkerij Zoet"),
        program_id="v1",
    )
