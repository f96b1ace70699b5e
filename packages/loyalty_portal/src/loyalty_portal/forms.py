"""Reading form fields into values, collecting each field's problem to show beside it. A field's
bounds are the API's own declarations (``loyalty_core.bounds``) and numbers are read by core's rule
(``loyalty_core.numbers``), so a form refuses what the API refuses."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from datetime import date
from decimal import Decimal
from typing import Any, TypedDict

from litestar import Request
from msgspec import Meta

from loyalty_core.error_status import status_of
from loyalty_core.errors import DomainError, NotFound, ValidationFailed
from loyalty_core.numbers import cents_of, euros, is_number, row_id_of, whole_of, whole_range


def row_id(raw: str, refusal: Callable[[], NotFound]) -> int:
    """A row id from a page's path; anything but its digits is the kind's not-found (INPUT-13)."""
    found = row_id_of(raw)
    if found is None:
        raise refusal()
    return found


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

    def text(self, name: str, bound: Meta | None = None, *, required: bool = False) -> str | None:
        """The field's text, trimmed; with ``bound``, within its lengths. Without one the field is a
        choice checked against its options, or its value is judged by the service."""
        value = self.raw.get(name, "").strip()
        if not value:
            if required:
                self.problems.setdefault(name, []).append("This field is required.")
            return None
        if bound is not None and bound.max_length is not None and len(value) > bound.max_length:
            self.problems.setdefault(name, []).append(f"At most {bound.max_length} characters.")
        elif bound is not None and bound.min_length is not None and len(value) < bound.min_length:
            self.problems.setdefault(name, []).append(f"At least {bound.min_length} characters.")
        return value

    def matching(self, name: str, bound: Meta, shape: str, *, required: bool = False) -> str | None:
        """Text within ``bound`` that also has the form its pattern declares; otherwise ``shape`` says
        what is expected (``A colour such as #1d1d1f.``)."""
        value = self.text(name, bound, required=required)
        if value is not None and bound.pattern is not None and re.search(bound.pattern, value) is None:
            self.problems.setdefault(name, []).append(shape)
        return value

    def whole(self, name: str, bound: Meta | None = None, *, required: bool = False) -> int | None:
        """A whole number within ``bound``; without one, any signed 32-bit integer, as the API's
        integer fields take."""
        value = self.text(name, required=required)
        if value is None:
            return None
        low, high = whole_range(bound)
        number = whole_of(value)
        if number is None or not low <= number <= high:
            self.problems.setdefault(name, []).append(f"A whole number from {low} to {high}.")
            return None
        return number

    def money(self, name: str, bound: Meta | None = None, *, required: bool = False) -> int | None:
        """An amount typed in euros (``12.50``; a comma for the point, or fewer decimals, too), as the
        cents core stores, within ``bound`` (the API's bounds, in cents); never rounded (PORTAL-17)."""
        value = self.text(name, required=required)
        if value is None:
            return None
        low, high = whole_range(bound)
        low = max(low, 0)
        cents = cents_of(value)
        if cents is None:
            self.problems.setdefault(name, []).append("An amount in euros such as 12.50, with at most two decimals.")
            return None
        if not low <= cents <= high:
            self.problems.setdefault(name, []).append(f"An amount from {euros(low)} to {euros(high)}.")
            return None
        return cents

    def line(self, name: str, bound: Meta, *, required: bool = False) -> str | None:
        """Text shown on one line (a name that reaches mail headers and passes): no control character."""
        value = self.text(name, bound, required=required)
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
        if not is_number(value):
            self.problems.setdefault(name, []).append("A number such as 1.5.")
            return None
        return Decimal(value)

    def words(self, name: str) -> list[str] | None:
        """A list typed as text, one entry per comma or line; empty is no list at all."""
        value = self.text(name)
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


def field_problems(refused: DomainError) -> dict[str, list[str]]:
    """What a refusal of core says of each field, to show beside it: a validation failure's fields
    (INPUT-7), none for any other refusal."""
    return refused.fields if isinstance(refused, ValidationFailed) else {}


class Refused(TypedDict):
    """A page's arguments that show a refused save: the API's status and message, the problem of
    each field it names, and the form as typed, since a refused save changes nothing."""

    status: int
    error: str
    problems: dict[str, list[str]]
    values: dict[str, str]


def refused_save(
    refused: DomainError, typed: Mapping[str, str], problems: dict[str, list[str]] | None = None
) -> Refused:
    """``problems`` where the form names its fields otherwise than the API (a tier's row)."""
    return Refused(
        status=status_of(refused),
        error=refused.message,
        problems=field_problems(refused) if problems is None else problems,
        values=dict(typed),
    )
