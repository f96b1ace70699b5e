"""``SigningIdentity``: a shop's pass-signing certificate, its private key and the platform's
intermediate certificate, loaded once and kept as objects, with their PEM form for storage."""

from __future__ import annotations

from dataclasses import dataclass

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from loyalty_wallet_pass.errors import InvalidIdentity

SigningKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
"""The key types a PKCS#7 signer takes and the platforms issue."""


def new_rsa_key() -> rsa.RSAPrivateKey:
    """A fresh 2048-bit RSA key, the size both wallet platforms use."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def private_key_pem(key: SigningKey) -> bytes:
    """The key as unencrypted PKCS#8 PEM: seal it (``sealing.encrypt``) before it is stored."""
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def load_private_key(pem: bytes, *, checked_before: bool = False) -> SigningKey:
    """Read a PEM private key. ``checked_before``: the key passed this check when it was stored and
    comes back from authenticated sealing, so cryptography's RSA consistency check (a costly one,
    on every pass built) is skipped; never for a key from outside."""
    try:
        key = serialization.load_pem_private_key(pem, password=None, unsafe_skip_rsa_key_validation=checked_before)
    except (ValueError, TypeError) as exc:
        raise InvalidIdentity(f"private key cannot be read: {exc}") from exc
    if not isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey):
        raise InvalidIdentity(f"private key of type {type(key).__name__} cannot sign a pass")
    return key


def _load_certificate(pem: bytes, what: str) -> x509.Certificate:
    try:
        return x509.load_pem_x509_certificate(pem)
    except ValueError as exc:
        raise InvalidIdentity(f"{what} certificate cannot be read: {exc}") from exc


def _subject_text(certificate: x509.Certificate, oid: x509.ObjectIdentifier) -> str | None:
    values = certificate.subject.get_attributes_for_oid(oid)
    return str(values[0].value) if values else None


@dataclass(frozen=True, slots=True)
class SigningIdentity:
    """What signs a shop's platform_a passes. Build it once per shop and reuse it for every pass."""

    certificate: x509.Certificate
    private_key: SigningKey
    intermediate: x509.Certificate

    def __post_init__(self) -> None:
        if self.certificate.public_key() != self.private_key.public_key():
            raise InvalidIdentity("private key does not belong to the pass certificate")
        try:
            self.certificate.verify_directly_issued_by(self.intermediate)
        except (ValueError, TypeError, InvalidSignature) as exc:
            raise InvalidIdentity(f"pass certificate is not issued by the intermediate: {exc}") from exc
        if self.pass_type_identifier is None or self.team_identifier is None:
            raise InvalidIdentity("pass certificate names no pass type (subject UID) or team (subject OU)")

    @property
    def pass_type_identifier(self) -> str | None:
        """The platform writes the pass type into the certificate's subject UID."""
        return _subject_text(self.certificate, NameOID.USER_ID)

    @property
    def team_identifier(self) -> str | None:
        """The platform writes the developer team into the certificate's subject OU."""
        return _subject_text(self.certificate, NameOID.ORGANIZATIONAL_UNIT_NAME)

    @classmethod
    def from_pem(
        cls, certificate: bytes, private_key: bytes, intermediate: bytes, *, checked_before: bool = False
    ) -> SigningIdentity:
        """Load and check an identity from its three PEM parts (``InvalidIdentity`` when they do not fit).

        ``checked_before`` as in ``load_private_key``: for an identity read back from the service's
        own sealed storage, which makes loading a shop's identity take well under a millisecond.
        """
        return cls(
            certificate=_load_certificate(certificate, "pass"),
            private_key=load_private_key(private_key, checked_before=checked_before),
            intermediate=_load_certificate(intermediate, "intermediate"),
        )

    def certificate_pem(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.PEM)

    def intermediate_pem(self) -> bytes:
        return self.intermediate.public_bytes(serialization.Encoding.PEM)

    def private_key_pem(self) -> bytes:
        return private_key_pem(self.private_key)
