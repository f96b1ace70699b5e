"""Who caused a ledger entry, as each entry records it (``causer_type``, ``causer_id``).

A module of its own, below the wallet's services: the till's adjustment (``till_adjust``) and the
services package both need it, and the services package imports ``till_adjust``.
"""

from __future__ import annotations

from dataclasses import dataclass

from loyalty_core.wallet.models import CauserType


@dataclass(frozen=True, slots=True)
class Causer:
    type: str
    id: str | None = None


SYSTEM = Causer(CauserType.SYSTEM)
"""The service itself: the jobs (expiry) and the writes no person or client asked for."""
