"""Signing identities: PEM in and out, parts that must belong together, and keys sealed at rest."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.serialization import Encoding

from loyalty_wallet_pass.apple import build_pkpass
from loyalty_wallet_pass.authority import CertificateAuthority
from loyalty_wallet_pass.card import PassCard
from loyalty_wallet_pass.errors import InvalidIdentity
from loyalty_wallet_pass.identity import SigningIdentity, new_rsa_key, private_key_pem
from loyalty_wallet_pass.sealing import decrypt, encrypt
from tests.support.openssl import pkpass_members, signature_verifies

SECRET = "a-settings-key-of-at-least-32-bytes!"


def test_identity_round_trips_through_pem(identity: SigningIdentity) -> None:
    again = SigningIdentity.from_pem(
        identity.certificate_pem(), identity.private_key_pem(), identity.intermediate_pem()
    )
    assert again.certificate == identity.certificate
    assert again.intermediate == identity.intermediate
    assert again.private_key.public_key() == identity.private_key.public_key()
    assert (again.pass_type_identifier, again.team_identifier) == ("pass.local.loyalty.v1", "LOCALTEAM1")


def test_a_key_of_another_certificate_is_refused(identity: SigningIdentity) -> None:
    with pytest.raises(InvalidIdentity, match="does not belong"):
        SigningIdentity.from_pem(
            identity.certificate_pem(), private_key_pem(new_rsa_key()), identity.intermediate_pem()
        )


def test_an_intermediate_that_did_not_issue_the_certificate_is_refused(identity: SigningIdentity) -> None:
    stranger = CertificateAuthority.create()
    with pytest.raises(InvalidIdentity, match="not issued by the intermediate"):
        SigningIdentity.from_pem(
            identity.certificate_pem(),
            identity.private_key_pem(),
            stranger.intermediate.public_bytes(Encoding.PEM),
        )


@pytest.mark.parametrize("part", ["certificate", "private_key", "intermediate"])
def test_unreadable_pem_is_an_invalid_identity(identity: SigningIdentity, part: str) -> None:
    parts = {
        "certificate": identity.certificate_pem(),
        "private_key": identity.private_key_pem(),
        "intermediate": identity.intermediate_pem(),
    }
    parts[part] = b"-----BEGIN NOTHING-----\nAAAA\n-----END NOTHING-----\n"
    with pytest.raises(InvalidIdentity, match="cannot be read"):
        SigningIdentity.from_pem(parts["certificate"], parts["private_key"], parts["intermediate"])


def test_authority_round_trips_through_pem(authority: CertificateAuthority) -> None:
    again = CertificateAuthority.from_pem(authority.to_pem())
    assert (again.root, again.intermediate) == (authority.root, authority.intermediate)
    assert again.intermediate_key.public_key() == authority.intermediate_key.public_key()
    issued = again.issue("pass.local.loyalty.v2")
    issued.certificate.verify_directly_issued_by(authority.intermediate)


def test_sealed_key_opens_with_the_same_secret_and_context(identity: SigningIdentity) -> None:
    plaintext = identity.private_key_pem()
    sealed = encrypt(plaintext, SECRET, context=b"vendor:1")
    assert plaintext not in sealed
    assert sealed != encrypt(plaintext, SECRET, context=b"vendor:1")
    assert decrypt(sealed, SECRET, context=b"vendor:1") == plaintext
    assert decrypt(sealed, SECRET.encode(), context=b"vendor:1") == plaintext


@pytest.mark.parametrize(
    ("secret", "context"),
    [("another-settings-key-of-32-bytes-or-more", b"vendor:1"), (SECRET, b"vendor:2")],
    ids=["other secret", "other shop"],
)
def test_sealed_key_does_not_open_elsewhere(secret: str, context: bytes) -> None:
    sealed = encrypt(b"key material", SECRET, context=b"vendor:1")
    with pytest.raises(InvalidIdentity, match="does not open"):
        decrypt(sealed, secret, context=context)


def test_a_changed_byte_of_a_sealed_key_is_caught() -> None:
    sealed = bytearray(encrypt(b"key material", SECRET))
    sealed[-1] ^= 0x01
    with pytest.raises(InvalidIdentity, match="does not open"):
        decrypt(bytes(sealed), SECRET)


def test_an_unknown_sealing_format_is_refused() -> None:
    with pytest.raises(InvalidIdentity, match="unknown format"):
        decrypt(b"\x02" + bytes(40), SECRET)


def test_a_short_settings_key_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 32 bytes"):
        encrypt(b"key material", "short")


def test_identity_read_back_from_sealed_storage_signs_the_same(
    identity: SigningIdentity, authority: CertificateAuthority, card: PassCard
) -> None:
    """An identity stored sealed and loaded without the slow key check still signs verifiable passes."""
    sealed = encrypt(identity.private_key_pem(), SECRET, context=b"vendor:1")
    again = SigningIdentity.from_pem(
        identity.certificate_pem(),
        decrypt(sealed, SECRET, context=b"vendor:1"),
        identity.intermediate_pem(),
        checked_before=True,
    )
    assert signature_verifies(pkpass_members(build_pkpass(card, again)), authority.root_pem())


def test_a_foreign_key_is_refused_even_when_said_checked_before(identity: SigningIdentity) -> None:
    with pytest.raises(InvalidIdentity, match="does not belong"):
        SigningIdentity.from_pem(
            identity.certificate_pem(),
            private_key_pem(new_rsa_key()),
            identity.intermediate_pem(),
            checked_before=True,
        )
