"""``PassPlatform``: how the service obtains a shop's platform_a signing identity, and
``LocalPassPlatform``, the stand-in that runs its own certificate authority and needs no network.

The stand-in issues unless scripted: a script (``busy``, ``refused`` or ``issued``) is the shop's
next answer only, and the one after it issues again, so a test plays one busy or refused answer and
then sees the service recover the way it would once the platform is back. Once issued, asking
again gives the same identity, so a repeated request after a crash does not multiply certificates.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from loyalty_wallet_pass.authority import CertificateAuthority
from loyalty_wallet_pass.identity import SigningIdentity

BUSY_RETRY_AFTER_SECONDS = 60
"""How long a busy platform asks callers to wait before asking again."""
_SHOP_ID = re.compile(r"[a-z0-9-]{1,64}")


class Outcome(StrEnum):
    BUSY = "busy"
    REFUSED = "refused"
    ISSUED = "issued"


@dataclass(frozen=True, slots=True)
class IdentityRequest:
    shop_id: str
    """Stable per shop; lower-case letters, digits and dashes, so it can name the pass type."""
    shop_name: str

    def __post_init__(self) -> None:
        if not _SHOP_ID.fullmatch(self.shop_id):
            raise ValueError(f"shop id {self.shop_id!r} is not 1-64 of a-z 0-9 -")


@dataclass(frozen=True, slots=True)
class Issued:
    identity: SigningIdentity
    outcome: Outcome = Outcome.ISSUED


@dataclass(frozen=True, slots=True)
class Busy:
    retry_after_seconds: int = BUSY_RETRY_AFTER_SECONDS
    outcome: Outcome = Outcome.BUSY


@dataclass(frozen=True, slots=True)
class Refused:
    reason: str
    outcome: Outcome = Outcome.REFUSED


IdentityAnswer = Issued | Busy | Refused


class PassPlatform(Protocol):
    """The wallet platform's side of issuing a shop's pass-signing identity."""

    async def request_identity(self, request: IdentityRequest) -> IdentityAnswer:
        """Ask for the shop's identity; the platform issues it, is busy, or refuses."""
        ...


class LocalPassPlatform:
    """The platform stand-in: a local CA issuing real certificates, answering as scripted per shop."""

    def __init__(
        self,
        authority: CertificateAuthority | None = None,
        *,
        pass_type_prefix: str = "pass.local.loyalty",
        now: datetime | None = None,
    ) -> None:
        self.authority = authority or CertificateAuthority.create(now=now)
        self._prefix = pass_type_prefix
        self._scripts: dict[str, Outcome] = {}
        self._issued: dict[str, SigningIdentity] = {}
        self.requests: list[IdentityRequest] = []
        """Every request in order, so tests can count how often the service asked."""

    def script(self, shop_id: str, outcome: Outcome | str) -> None:
        """Set this shop's next answer; a text other than the three answers is a ``ValueError``."""
        self._scripts[shop_id] = Outcome(outcome)

    def scripted(self, shop_id: str) -> Outcome:
        """The shop's next answer, without using it up."""
        return self._scripts.get(shop_id, Outcome.ISSUED)

    def pass_type_identifier(self, shop_id: str) -> str:
        return f"{self._prefix}.{shop_id}"

    async def request_identity(self, request: IdentityRequest) -> IdentityAnswer:
        self.requests.append(request)
        outcome = self._scripts.pop(request.shop_id, Outcome.ISSUED)
        if outcome is Outcome.BUSY:
            return Busy()
        if outcome is Outcome.REFUSED:
            return Refused(f"the platform refused a pass type for {request.shop_name!r} (scripted)")
        identity = self._issued.get(request.shop_id)
        if identity is None:
            # key generation takes tens of milliseconds: keep it off the event loop
            identity = await asyncio.to_thread(self.authority.issue, self.pass_type_identifier(request.shop_id))
            identity = self._issued.setdefault(request.shop_id, identity)
        return Issued(identity)
