"""A sealer for the suites that run without the wallet-pass package (core, http): HMAC-SHA256 in
counter mode with an HMAC tag over the context, so a sealed secret is unreadable and a changed byte
or another context does not open. The service seals with AES-GCM (``loyalty_wallet_pass.sealing``)."""

from __future__ import annotations

import hashlib
import hmac
import os

KEY = b"test-sealing-key-of-thirty-two-bytes!"


class HmacSealer:
    def __init__(self, key: bytes = KEY) -> None:
        self._key = key

    def _stream(self, nonce: bytes, length: int) -> bytes:
        blocks = (
            hmac.new(self._key, nonce + i.to_bytes(4, "big"), hashlib.sha256).digest() for i in range(length // 32 + 1)
        )
        return b"".join(blocks)[:length]

    def seal(self, plaintext: bytes, context: bytes) -> bytes:
        nonce = os.urandom(16)
        body = bytes(a ^ b for a, b in zip(plaintext, self._stream(nonce, len(plaintext)), strict=True))
        tag = hmac.new(self._key, context + nonce + body, hashlib.sha256).digest()
        return nonce + tag + body

    def open(self, sealed: bytes, context: bytes) -> bytes:
        nonce, tag, body = sealed[:16], sealed[16:48], sealed[48:]
        if not hmac.compare_digest(tag, hmac.new(self._key, context + nonce + body, hashlib.sha256).digest()):
            raise ValueError("sealed value does not open with this key and context")
        return bytes(a ^ b for a, b in zip(body, self._stream(nonce, len(body)), strict=True))
