"""Domain errors. Each concrete error carries its error code; the HTTP layer maps code to status."""

from __future__ import annotations

from typing import ClassVar


class DomainError(Exception):
    code: ClassVar[str]

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class NotFound(DomainError):
    """The thing named does not exist for this vendor."""


class Conflict(DomainError):
    """The write collides with something already registered."""


class RuleViolation(DomainError):
    """A business rule refuses the request; nothing was written."""


class ValidationFailed(RuleViolation):
    """Field-level refusals found by a rule that needs data (a plan ceiling, a uniqueness rule).

    ``fields`` maps a field path to English sentences, as INPUT-7 asks
    for rules of the service.
    """

    code = "VALIDATION_ERROR"

    def __init__(self, message: str, fields: dict[str, list[str]]) -> None:
        super().__init__(message, **fields)
        self.fields = fields


class IdempotencyKeyConflict(RuleViolation):
    """A key already used for a different customer, amount, product or reward; nothing is written.
    Shared by every money-like write that takes a key (rewards, adjustments, transactions, redemptions)."""

    code = "IDEMPOTENCY_KEY_CONFLICT"
