"""The access token of the client credentials, kept until shortly before it expires."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from loyalty_client.models import TokenRequest, TokenResponse

EARLY_SECONDS: Final = 30.0
"""A token is renewed this long before it expires (at most half its lifetime), so a request never
leaves with a token that runs out on the way."""


@dataclass
class TokenCache:
    client_id: str
    client_secret: str
    token: str | None = None
    renew_at: float = 0.0

    def request(self) -> TokenRequest:
        return TokenRequest(grant_type="client_credentials", client_id=self.client_id, client_secret=self.client_secret)

    def current(self, now: float) -> str | None:
        return self.token if self.token is not None and now < self.renew_at else None

    def keep(self, answer: TokenResponse, issued_at: float) -> str:
        self.token = answer.access_token
        self.renew_at = issued_at + answer.expires_in - min(EARLY_SECONDS, answer.expires_in / 2)
        return self.token

    def drop(self) -> None:
        self.token = None
