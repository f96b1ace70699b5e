"""The local platform stand-in: real certificates under its own root, and the scripted answers
(busy, refused, issued) the service's identity rules are tested against."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives.serialization import Encoding

from loyalty_wallet_pass.authority import CertificateAuthority
from loyalty_wallet_pass.platform import (
    Busy,
    IdentityRequest,
    Issued,
    LocalPassPlatform,
    Outcome,
    PassPlatform,
    Refused,
)
from tests.support.openssl import openssl

SHOP = IdentityRequest(shop_id="v7", shop_name="Bakkerij Zoet")


@pytest.fixture
def platform(authority: CertificateAuthority) -> LocalPassPlatform:
    return LocalPassPlatform(authority)


async def test_an_unscripted_shop_is_issued_at_once(platform: LocalPassPlatform) -> None:
    """The stand-in issues a new shop's identity at once unless scripted."""
    stand_in: PassPlatform = platform
    answer = await stand_in.request_identity(SHOP)
    assert isinstance(answer, Issued)
    assert answer.outcome is Outcome.ISSUED
    assert answer.identity.pass_type_identifier == "pass.local.loyalty.v7"
    assert answer.identity.team_identifier == "LOCALTEAM1"
    assert answer.identity.intermediate == platform.authority.intermediate


async def test_issued_certificate_chains_to_the_root(platform: LocalPassPlatform, tmp_path: Path) -> None:
    """An independent tool accepts the chain root -> intermediate -> pass certificate."""
    answer = await platform.request_identity(SHOP)
    assert isinstance(answer, Issued)
    (tmp_path / "root.pem").write_bytes(platform.authority.root_pem())
    (tmp_path / "intermediate.pem").write_bytes(answer.identity.intermediate_pem())
    (tmp_path / "pass.pem").write_bytes(answer.identity.certificate.public_bytes(Encoding.PEM))
    result = openssl(
        "verify",
        "-CAfile",
        tmp_path / "root.pem",
        "-untrusted",
        tmp_path / "intermediate.pem",
        tmp_path / "pass.pem",
    )
    assert result.returncode == 0, result.stderr
    alone = openssl("verify", "-CAfile", tmp_path / "root.pem", tmp_path / "pass.pem")
    assert alone.returncode != 0


async def test_busy_is_the_next_answer_only_then_it_issues(platform: LocalPassPlatform) -> None:
    """Test mode: `busy` answers the next request, asking the caller to wait a minute; the one after
    issues without another script."""
    platform.script("v7", Outcome.BUSY)
    assert await platform.request_identity(SHOP) == Busy(retry_after_seconds=60)
    assert platform.scripted("v7") is Outcome.ISSUED
    assert isinstance(await platform.request_identity(SHOP), Issued)
    assert platform.requests == [SHOP, SHOP]


async def test_refused_is_the_next_answer_only_then_it_issues(platform: LocalPassPlatform) -> None:
    """Test mode: `refused` answers the next request; a script again refuses once more."""
    platform.script("v7", Outcome.REFUSED)
    first = await platform.request_identity(SHOP)
    assert isinstance(first, Refused)
    assert first.reason == "the platform refused a pass type for 'Bakkerij Zoet' (scripted)"
    assert isinstance(await platform.request_identity(SHOP), Issued)
    platform.script("v7", "refused")
    assert await platform.request_identity(SHOP) == first


async def test_scripts_are_per_shop(platform: LocalPassPlatform) -> None:
    platform.script("v7", Outcome.REFUSED)
    other = IdentityRequest(shop_id="v8", shop_name="Slagerij")
    assert isinstance(await platform.request_identity(other), Issued)
    assert (platform.scripted("v7"), platform.scripted("v8")) == (Outcome.REFUSED, Outcome.ISSUED)


async def test_asking_again_after_issue_gives_the_same_identity(platform: LocalPassPlatform) -> None:
    first, second = await platform.request_identity(SHOP), await platform.request_identity(SHOP)
    assert isinstance(first, Issued)
    assert isinstance(second, Issued)
    assert first.identity is second.identity


def test_a_script_names_only_the_three_answers(platform: LocalPassPlatform) -> None:
    """Test mode: the answer is one of busy, refused or issued; anything else changes nothing."""
    with pytest.raises(ValueError, match="maybe"):
        platform.script("v7", "maybe")
    assert platform.scripted("v7") is Outcome.ISSUED


@pytest.mark.parametrize("shop_id", ["", "V7", "v 7", "v.7", "x" * 65])
def test_shop_id_must_name_a_pass_type(shop_id: str) -> None:
    with pytest.raises(ValueError, match="shop id"):
        IdentityRequest(shop_id=shop_id, shop_name="Shop")
