"""Access tokens: HS256 JWTs carrying the client (``sub``), its vendor (``vid``) and a ``jti``.

Expiry is judged by the service Clock, not the machine's, so the test clock can expire a token.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import jwt

from loyalty_core.clock import Clock

ALGORITHM = "HS256"


@dataclass(frozen=True, slots=True)
class Claims:
    client_id: str
    vendor_id: int | None
    jti: str


VERIFIED_CACHE_SIZE = 10_000


class TokenCodec:
    def __init__(self, secret: str, clock: Clock) -> None:
        self._secret, self._clock = secret, clock
        self._verified: dict[str, tuple[Claims, int]] = {}

    def encode(self, *, client_id: str, vendor_id: int | None, jti: str, expires_at: datetime) -> str:
        now = self._clock.now()
        payload = {
            "sub": client_id,
            "vid": vendor_id,
            "jti": jti,
            "iat": int(now.timestamp()),
            "exp": int(expires_at.timestamp()),
        }
        return jwt.encode(payload, self._secret, algorithm=ALGORITHM)

    def decode(self, token: str) -> Claims | None:
        """The claims of a well-signed, unexpired token; None for anything else (``alg: none``,
        another key, a missing or past ``exp``, a malformed token).

        A till sends one token for an hour: its verified claims are kept, keyed by the whole token
        (signature included, so no other text finds them), and only its expiry is judged again each
        time, since verifying the signature and parsing the JSON would otherwise be much of the
        token check's cost. Revocation is not decided here: the token's row is read on every request."""
        known = self._verified.get(token)
        if known is not None:
            claims, exp = known
            return claims if exp > self._clock.now().timestamp() else None
        claims_exp = self._verify(token)
        if claims_exp is None:
            return None
        if len(self._verified) >= VERIFIED_CACHE_SIZE:
            self._verified.clear()
        self._verified[token] = claims_exp
        return claims_exp[0]

    def _verify(self, token: str) -> tuple[Claims, int] | None:
        try:
            payload: dict[str, Any] = jwt.decode(
                token,
                self._secret,
                algorithms=[ALGORITHM],
                options={"verify_exp": False, "verify_iat": False, "require": ["exp", "sub", "jti"]},
            )
        except jwt.PyJWTError:
            return None
        exp = payload.get("exp")
        vid = payload.get("vid")
        if not isinstance(exp, int) or exp <= self._clock.now().timestamp():
            return None
        if not isinstance(payload["sub"], str) or not isinstance(payload["jti"], str):
            return None
        if vid is not None and not isinstance(vid, int):
            return None
        return Claims(client_id=payload["sub"], vendor_id=vid, jti=payload["jti"]), exp


_UNREAD = object()


def request_claims(scope: Any, token: str | None, codec: TokenCodec) -> Claims | None:
    """The request's token claims, decoded once: the rate limiter and the authenticator both ask."""
    state = scope.setdefault("state", {})
    cached = state.get("claims", _UNREAD)
    if cached is _UNREAD:
        cached = state["claims"] = codec.decode(token) if token else None
    claims: Claims | None = cached
    return claims
