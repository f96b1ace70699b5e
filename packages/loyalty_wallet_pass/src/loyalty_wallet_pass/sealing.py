"""Sealing secrets at rest: ``encrypt`` and ``decrypt`` a private key under a key from settings.

AES-256-GCM with a fresh 96-bit nonce per sealing. The settings key may be any secret text of
32 bytes or more; HKDF-SHA256 turns it into the AES key, so its form does not matter. ``context``
(for example ``b"vendor:42"``) is bound in as associated data: a sealed key copied onto another
shop's row does not open there.
"""

from __future__ import annotations

import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from loyalty_wallet_pass.errors import InvalidIdentity

VERSION = b"\x01"
"""The first byte of every sealed value, so the scheme can change without guessing."""
_NONCE_BYTES = 12
_MIN_SECRET_BYTES = 32


def _cipher(secret: bytes | str) -> AESGCM:
    material = secret.encode() if isinstance(secret, str) else secret
    if len(material) < _MIN_SECRET_BYTES:
        raise ValueError(f"the encryption key must be at least {_MIN_SECRET_BYTES} bytes")
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"loyalty-wallet-pass sealing v1").derive(material)
    return AESGCM(key)


def encrypt(plaintext: bytes, secret: bytes | str, *, context: bytes = b"") -> bytes:
    """``VERSION + nonce + ciphertext-with-tag``; a new nonce each time, so equal inputs seal differently."""
    nonce = os.urandom(_NONCE_BYTES)
    return VERSION + nonce + _cipher(secret).encrypt(nonce, plaintext, context)


def decrypt(sealed: bytes, secret: bytes | str, *, context: bytes = b"") -> bytes:
    """The plaintext, or ``InvalidIdentity`` for a wrong key, context or a changed byte."""
    if not sealed.startswith(VERSION) or len(sealed) < 1 + _NONCE_BYTES + 16:
        raise InvalidIdentity("sealed value has an unknown format")
    nonce, body = sealed[1 : 1 + _NONCE_BYTES], sealed[1 + _NONCE_BYTES :]
    try:
        return _cipher(secret).decrypt(nonce, body, context)
    except InvalidTag as exc:
        raise InvalidIdentity("sealed value does not open with this key and context") from exc
