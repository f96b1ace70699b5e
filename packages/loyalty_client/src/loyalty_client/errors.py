"""The error every failed call raises. ``error_codes`` holds one subclass per error code the
service answers with; a code the client does not know raises ``LoyaltyError`` itself, and a call
that got no answer at all raises ``APIConnectionError``."""

from __future__ import annotations

from typing import Any, ClassVar


class LoyaltyError(Exception):
    """A failed call: the error envelope's ``code``, ``status``, ``details`` and ``request_id``
    (quote it to support), and its ``message`` as the exception's text."""

    code: ClassVar[str] = ""

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        status: int,
        details: dict[str, Any] | None = None,
        request_id: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code  # type: ignore[misc]  # an unknown code is kept on the instance
        self.status = status
        self.details = details
        self.request_id = request_id
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, status={self.status}, request_id={self.request_id!r})"


class APIConnectionError(LoyaltyError):
    """A call that got no answer: the connection failed or timed out, or the answer broke off. The
    ``httpx.TransportError`` is chained as ``__cause__``. With no answer there is no code, status
    (0) or request id; a call that is safe to repeat has been repeated before this is raised."""

    def __init__(self, message: str) -> None:
        super().__init__(message, status=0)
