"""When a failed call is tried again, and after how long.

A 429 or 503 clears by waiting (``Retry-After`` says how long), except PLAN_LIMIT_EXCEEDED (the
allowance of the period is spent) and SUBSCRIPTION_EXPIRED (the vendor must choose a plan): those
are raised at once. A call that got no answer (``APIConnectionError``: refused, timed out, broken
off) may clear by waiting too, and is repeated alike. Only a repeatable operation is retried
(``Operation.repeatable``): a write without an idempotency key might have been done, and with no
answer the client cannot know. A call is attempted at most three times and waits at most 60
seconds in all; a ``Retry-After`` that would pass that is raised instead of waited for."""

from __future__ import annotations

from typing import Final

from loyalty_client.errors import APIConnectionError, LoyaltyError
from loyalty_client.operation import Operation

MAX_ATTEMPTS: Final = 3
MAX_WAIT_SECONDS: Final = 60.0
RETRIED_STATUSES: Final = frozenset({429, 503})
NEVER_RETRIED: Final = frozenset({"PLAN_LIMIT_EXCEEDED", "SUBSCRIPTION_EXPIRED"})


def retry_delay(op: Operation, error: LoyaltyError, attempt: int, waited: float) -> float | None:
    """Seconds to wait before attempt ``attempt + 1``, or None to raise ``error`` now."""
    if not clears_by_waiting(error) or not op.repeatable:
        return None
    if attempt >= MAX_ATTEMPTS:
        return None
    delay = error.retry_after if error.retry_after is not None else float(2 ** (attempt - 1))
    if waited + delay > MAX_WAIT_SECONDS:
        return None
    return delay


def clears_by_waiting(error: LoyaltyError) -> bool:
    if isinstance(error, APIConnectionError):
        return True
    return error.status in RETRIED_STATUSES and error.code not in NEVER_RETRIED
