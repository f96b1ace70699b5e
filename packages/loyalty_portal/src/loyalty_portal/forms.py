"""Reading form fields into values, collecting each field's problem to show beside it."""

from __future__ import annotations

from datetime import date
from typing import Any

from litestar import Request

from loyalty_core.errors import ValidationFailed

MAX_INT = 2_147_483_647


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
