"""The portal's customer import file: a CSV with a header row, read a row at a time (CUSTOMER-15).

Columns (any order, names as below, unknown ones refused): ``external_id``, ``card``, ``email``,
``first_name``, ``last_name``, ``phone``, ``date_of_birth`` (YYYY-MM-DD) and ``opening_points``
(0 to 2,147,483,647; empty is 0). Every row names an ``external_id`` or a ``card``: that is how a
second run of the same file recognises the customers it brought already. A row is checked on its
own; one refused row refuses only itself.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TextIO

from loyalty_core.customers.rules import cards
from loyalty_core.customers.services.profiles import IdentifierInput, Profile
from loyalty_core.numbers import whole_of

COLUMNS = ("external_id", "card", "email", "first_name", "last_name", "phone", "date_of_birth", "opening_points")
MAX_POINTS = 2_147_483_647
LENGTHS = {"external_id": 255, "email": 255, "first_name": 255, "last_name": 255, "phone": 50}
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
MAX_FIELD = 4096
"""A field longer than any column allows is refused by the CSV reader before it is held."""


class ImportFileRefused(Exception):
    """The file as a whole cannot be read: no header, an unknown column, not UTF-8 text."""


@dataclass(frozen=True, slots=True)
class ImportRow:
    """Row ``line`` (1 is the first row under the header): the customer, or why it is refused."""

    line: int
    profile: Profile | None = None
    opening_points: int = 0
    reason: str | None = None


def _header(reader: Iterator[list[str]]) -> list[str]:
    try:
        names = [name.strip().lower() for name in next(reader)]
    except StopIteration:
        raise ImportFileRefused("The file is empty; the first row names the columns.") from None
    unknown = [name for name in names if name not in COLUMNS]
    if unknown:
        raise ImportFileRefused(f"Unknown column {unknown[0][:40]!r}; the columns are {', '.join(COLUMNS)}.")
    if len(set(names)) != len(names):
        raise ImportFileRefused("A column is named twice.")
    if "external_id" not in names and "card" not in names:
        raise ImportFileRefused("The file needs an external_id or a card column.")
    return names


def open_file(path: Path) -> TextIO:
    """The file as text for :func:`rows_of`: UTF-8, with or without the byte order mark that Excel's
    "CSV UTF-8" writes first (left in, it would be read as part of the first column's name)."""
    return path.open(encoding="utf-8-sig", newline="")


def rows_of(text: TextIO) -> Iterator[ImportRow]:
    """Each data row of the file, checked; ``ImportFileRefused`` when the header or the text is
    unreadable (read lazily: a file's rows are never all held)."""
    csv.field_size_limit(MAX_FIELD)
    reader = csv.reader(text)
    try:
        names = _header(reader)
        for line, values in enumerate(reader, start=1):
            if not any(v.strip() for v in values):
                continue
            yield _row(line, names, values)
    except UnicodeDecodeError:
        raise ImportFileRefused("The file is not UTF-8 text.") from None
    except csv.Error as exc:
        raise ImportFileRefused(f"The file is not a CSV file the import can read ({exc}).") from None


def _row(line: int, names: list[str], values: list[str]) -> ImportRow:
    if len(values) != len(names):
        return ImportRow(line, reason=f"The row has {len(values)} fields; the header names {len(names)}.")
    raw = {name: value.strip() for name, value in zip(names, values, strict=True)}
    for name, value in raw.items():
        if "\x00" in value:
            return ImportRow(line, reason=f"{name} holds a character that is not allowed.")
        if len(value) > LENGTHS.get(name, 255):
            return ImportRow(line, reason=f"{name} is longer than {LENGTHS.get(name, 255)} characters.")
    card = raw.get("card") or None
    if card is not None and not cards.is_code(card):
        return ImportRow(line, reason="card is not a card code (8 letters and digits).")
    if not raw.get("external_id") and card is None:
        return ImportRow(line, reason="The row needs an external_id or a card.")
    email = raw.get("email") or None
    if email is not None and not EMAIL.match(email):
        return ImportRow(line, reason="email is not an email address.")
    born = None
    if raw.get("date_of_birth"):
        try:
            born = date.fromisoformat(raw["date_of_birth"])
        except ValueError:
            return ImportRow(line, reason="date_of_birth is not a date such as 1990-12-31.")
    # read as the API reads a number (INPUT-10): ASCII digits only, so "²" or "٣" is refused here
    points = whole_of(raw.get("opening_points") or "0")
    if points is None or not 0 <= points <= MAX_POINTS:
        return ImportRow(line, reason=f"opening_points is not a whole number from 0 to {MAX_POINTS}.")
    identifiers = (IdentifierInput(cards.LOYALTY_CARD, cards.normalise_code(card)),) if card else ()
    profile = Profile(
        first_name=raw.get("first_name") or None,
        last_name=raw.get("last_name") or None,
        email=email.lower() if email else None,
        phone=raw.get("phone") or None,
        date_of_birth=born,
        external_id=raw.get("external_id") or None,
        identifiers=identifiers,
    )
    return ImportRow(line, profile=profile, opening_points=points)
