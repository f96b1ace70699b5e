"""Reading form fields into values, collecting each field's problem to show beside it."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from litestar import Request

from loyalty_core.errors import NotFound, ValidationFailed

MAX_INT = 2_147_483_647
MAX_ID_DIGITS = 18
"""A row id is a bigint: more digits than this is no row, and a not-found rather than a 5xx."""


def row_id(raw: str, refusal: Callable[[], NotFound]) -> int:
    """A row id from a page's path; anything but its digits is the kind's not-found."""
    if raw.isdigit() and len(raw) <= MAX_ID_DIGITS:
        return int(raw)
    raise refusal()


class Form:
    def __init__(self, fields: dict[str, Any]) -> None:
        # PostgreSQL text cannot hold NUL: such a value is refused here, never sent to the database
        self.raw = {k: v.replace("\x00", "") for k, v in fields.items() if isinstance(v, str)}
        self.problems: dict[str, list[str]] = {}
        for name, value in fields.items():
            if isinstance(value, str) and "\x00" in value:
                self.problems.setdefault(name, []).append("This field holds a character that is not allowed.")

    @classmethod
    async def of(cls, request: Request[Any, Any, Any]) -> Form:
        return cls(dict((await request.form()).items()))

    def text(self, name: str, *, required: bool = False, max_length: int = 255) -> str | None:
        value = self.raw.get(name, "").strip()
        if not value:
            if required:
                self.problems.setdefault(name, []).append("This field is required.")
            return None
        if len(value) > max_length:
            self.problems.setdefault(name, []).append(f"At most {max_length} characters.")
        return value

    def whole(self, name: str, *, required: bool = False, low: int = 0, high: int = MAX_INT) -> int | None:
        value = self.text(name, required=required)
        if value is None:
            return None
        digits = value.lstrip("-")
        if not digits.isdigit() or len(digits) > 10 or not low <= int(value) <= high:
            self.problems.setdefault(name, []).append(f"A whole number from {low} to {high}.")
            return None
        return int(value)

    def line(self, name: str, *, required: bool = False, max_length: int = 255) -> str | None:
        """Text shown on one line (a name that reaches mail headers and passes): no control character."""
        value = self.text(name, required=required, max_length=max_length)
        if value is not None and any(unicodedata.category(c) == "Cc" for c in value):
            self.problems.setdefault(name, []).append("One line of text, without control characters.")
        return value

    def flag(self, name: str) -> bool:
        """A checkbox: sent when ticked, absent when not."""
        return name in self.raw

    def number(self, name: str) -> Decimal | None:
        value = self.text(name)
        if value is None:
            return None
        try:
            number = Decimal(value)
        except InvalidOperation:
            number = None
        if number is None or not number.is_finite():
            self.problems.setdefault(name, []).append("A number such as 1.5.")
            return None
        return number

    def words(self, name: str) -> list[str] | None:
        """A list typed as text, one entry per comma or line; empty is no list at all."""
        value = self.text(name, max_length=100_000)
        if value is None:
            return None
        return [part.strip() for part in value.replace("\n", ",").split(",") if part.strip()]

    def day(self, name: str) -> date | None:
        value = self.text(name)
        if value is None:
            return None
        try:
            return date.fromisoformat(value)
        except ValueError:
            self.problems.setdefault(name, []).append("A date such as 2026-12-31.")
            return None

    def check(self) -> None:
        if self.problems:
            raise ValidationFailed("Some fields need another look.", self.problems)
