"""Webhook secrets sealed at rest with ``LOYALTY_ENCRYPTION_KEY``, as the wallet passes' keys are
(AES-256-GCM, bound to the shop): a copy of the database alone does not reveal them."""

from __future__ import annotations

from loyalty_wallet_pass import sealing


class WebhookSealer:
    def __init__(self, encryption_key: str) -> None:
        self._key = encryption_key

    def seal(self, plaintext: bytes, context: bytes) -> bytes:
        return sealing.encrypt(plaintext, self._key, context=context)

    def open(self, sealed: bytes, context: bytes) -> bytes:
        return sealing.decrypt(sealed, self._key, context=context)
