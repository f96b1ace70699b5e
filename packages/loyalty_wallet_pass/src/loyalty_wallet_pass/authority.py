"""A small certificate authority for the local platform stand-in: root CA, an intermediate like
the platform's (WWDR-like) one, and per-shop pass-signing certificates, all real X.509.

Certificates take their validity from the wall clock given (default: now), with a day of slack
backwards so a verifier whose clock runs slightly behind still accepts them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from loyalty_wallet_pass.identity import SigningIdentity, load_private_key, new_rsa_key, private_key_pem

_SLACK = timedelta(days=1)
_CA_LIFETIME = timedelta(days=365 * 20)
_PASS_LIFETIME = timedelta(days=365)


def _name(common_name: str, *, unit: str | None = None, user_id: str | None = None) -> x509.Name:
    parts = []
    if user_id is not None:
        parts.append(x509.NameAttribute(NameOID.USER_ID, user_id))
    parts.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    if unit is not None:
        parts.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, unit))
    parts.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Loyalty local wallet platform"))
    return x509.Name(parts)


def _certificate(
    subject: x509.Name,
    public_key: rsa.RSAPublicKey,
    *,
    issuer: x509.Certificate | None,
    issuer_key: rsa.RSAPrivateKey,
    now: datetime,
    lifetime: timedelta,
    path_length: int | None,
) -> x509.Certificate:
    """A certificate for ``public_key``; ``path_length`` None means an end entity, else a CA."""
    is_ca = path_length is not None or issuer is None
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject if issuer is None else issuer.subject)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _SLACK)
        .not_valid_after(now + lifetime)
        .add_extension(x509.BasicConstraints(ca=is_ca, path_length=path_length), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    )
    if issuer is not None:
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False
        )
    if is_ca:
        usage = x509.KeyUsage(False, False, False, False, False, True, True, False, False)
    else:
        usage = x509.KeyUsage(True, False, False, False, False, False, False, False, False)
        # S/MIME verifiers (openssl smime -verify) require email protection or no EKU at all
        builder = builder.add_extension(
            # signing passes, and presenting the pass identity to the push service (PASS-19)
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.EMAIL_PROTECTION, ExtendedKeyUsageOID.CLIENT_AUTH]),
            critical=False,
        )
    builder = builder.add_extension(usage, critical=True)
    return builder.sign(issuer_key, hashes.SHA256())


@dataclass(frozen=True, slots=True)
class CertificateAuthority:
    """Root and intermediate with their keys. Verifiers trust ``root`` alone; passes carry the intermediate."""

    root: x509.Certificate
    root_key: rsa.RSAPrivateKey
    intermediate: x509.Certificate
    intermediate_key: rsa.RSAPrivateKey
    team_identifier: str

    @classmethod
    def create(cls, *, team_identifier: str = "LOCALTEAM1", now: datetime | None = None) -> CertificateAuthority:
        at = now or datetime.now(UTC)
        root_key, intermediate_key = new_rsa_key(), new_rsa_key()
        root = _certificate(
            _name("Loyalty local wallet root CA"),
            root_key.public_key(),
            issuer=None,
            issuer_key=root_key,
            now=at,
            lifetime=_CA_LIFETIME,
            path_length=1,
        )
        intermediate = _certificate(
            _name("Loyalty local wallet developer relations CA"),
            intermediate_key.public_key(),
            issuer=root,
            issuer_key=root_key,
            now=at,
            lifetime=_CA_LIFETIME,
            path_length=0,
        )
        return cls(root, root_key, intermediate, intermediate_key, team_identifier)

    def issue(self, pass_type_identifier: str, *, now: datetime | None = None) -> SigningIdentity:
        """A new key and pass certificate for one pass type, shaped like the platform's own."""
        key = new_rsa_key()
        subject = _name(
            f"Pass Type ID: {pass_type_identifier}", unit=self.team_identifier, user_id=pass_type_identifier
        )
        certificate = _certificate(
            subject,
            key.public_key(),
            issuer=self.intermediate,
            issuer_key=self.intermediate_key,
            now=now or datetime.now(UTC),
            lifetime=_PASS_LIFETIME,
            path_length=None,
        )
        return SigningIdentity(certificate=certificate, private_key=key, intermediate=self.intermediate)

    def root_pem(self) -> bytes:
        """The trust anchor a verifier needs (``openssl smime -verify -CAfile``)."""
        return self.root.public_bytes(serialization.Encoding.PEM)

    def to_pem(self) -> bytes:
        """Root, root key, intermediate, intermediate key, in that order; the keys unencrypted."""
        return b"".join(
            (
                self.root_pem(),
                private_key_pem(self.root_key),
                self.intermediate.public_bytes(serialization.Encoding.PEM),
                private_key_pem(self.intermediate_key),
            )
        )

    @classmethod
    def from_pem(cls, pem: bytes, *, team_identifier: str = "LOCALTEAM1") -> CertificateAuthority:
        """Read back what ``to_pem`` wrote."""
        certificates = x509.load_pem_x509_certificates(pem)
        keys = [key for block in _key_blocks(pem) if isinstance(key := load_private_key(block), rsa.RSAPrivateKey)]
        if len(certificates) != 2 or len(keys) != 2:
            raise ValueError("expected two certificates and two RSA keys")
        return cls(certificates[0], keys[0], certificates[1], keys[1], team_identifier)


def _key_blocks(pem: bytes) -> list[bytes]:
    begin, end = b"-----BEGIN PRIVATE KEY-----", b"-----END PRIVATE KEY-----"
    blocks, start = [], pem.find(begin)
    while start != -1:
        stop = pem.index(end, start) + len(end)
        blocks.append(pem[start:stop])
        start = pem.find(begin, stop)
    return blocks
