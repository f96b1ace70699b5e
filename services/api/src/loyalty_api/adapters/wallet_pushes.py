"""Test mode's stand-in for the wallet platforms' push services (section "Passes" of docs/rules.md,
PASS-14): it answers every push and object update with what was scripted for it (``ok`` unless
told otherwise) and keeps each attempt, in the order sent, for ``GET /admin/v1/test/wallet-pushes``."""

from __future__ import annotations

import threading
from collections import deque
from datetime import datetime

from loyalty_core.passes.services.ports import CardFacts, PushAttempt, PushOutcome, PushPlatform, WalletPushes

KEPT = 100_000
"""The stand-in forgets the oldest attempts past this many."""


class PushStandIn(WalletPushes):
    on_schedule = False

    def __init__(self) -> None:
        self._attempts: deque[PushAttempt] = deque(maxlen=KEPT)
        self._scripted: deque[PushOutcome] = deque()
        self._lock = threading.Lock()

    def _answer(self, attempt: PushAttempt) -> PushOutcome:
        with self._lock:
            self._attempts.append(attempt)
        return attempt.outcome

    def _next(self) -> PushOutcome:
        with self._lock:
            return self._scripted.popleft() if self._scripted else PushOutcome.OK

    async def push(
        self, vendor_id: int, pass_type_identifier: str, push_token: str, serial: str, now: datetime
    ) -> PushOutcome:
        return self._answer(PushAttempt(PushPlatform.PLATFORM_A, push_token, None, serial, now, self._next()))

    async def update_object(self, object_id: str, card: CardFacts, now: datetime) -> PushOutcome:
        return self._answer(PushAttempt(PushPlatform.PLATFORM_B, None, object_id, None, now, self._next()))

    def recorded(self) -> list[PushAttempt]:
        with self._lock:
            return list(self._attempts)

    def script(self, outcome: PushOutcome) -> bool:
        with self._lock:
            self._scripted.append(outcome)
        return True
