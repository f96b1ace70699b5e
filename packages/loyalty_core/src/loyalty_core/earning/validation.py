"""The admin bounds of earn rules and campaigns (EARN-13), checked on the whole row as it would be after
a create or an update, so a partial update cannot leave a campaign its kind cannot score.

Pure: a mapping of field to value in, the cleaned values out or ``ValidationFailed`` with every
field's sentences at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Final

from loyalty_core.earning.models import MAX_SKUS, MULTIPLIER_PLACES
from loyalty_core.earning.terms import FAMILIES, KINDS, MOMENTS, Family
from loyalty_core.errors import ValidationFailed
from loyalty_core.numbers import INT32_MAX

NAME_MAX: Final = 255
SKU_MAX: Final = 255
MULTIPLIER_LIMIT: Final = Decimal(10) ** (10 - MULTIPLIER_PLACES)
"""Exclusive upper bound of ``NUMERIC(10, 4)``."""

EARN_RULE_FIELDS: Final = frozenset({"name", "points_per_unit", "unit_amount", "min_transaction_amount", "active"})
CAMPAIGN_FIELDS: Final = frozenset(
    {
        "name",
        "family",
        "moment",
        "kind",
        "multiplier",
        "points",
        "skus",
        "max_points_per_transaction",
        "window_days",
        "inactive_days",
        "combinable",
        "min_transaction_amount",
        "starts_on",
        "ends_on",
        "branches",
        "active",
    }
)
KIND_NEEDS: Final = {"multiplier": ("multiplier",), "fixed_points": ("points",), "product_points": ("points", "skus")}
KIND_TAKES: Final = frozenset({"multiplier", "points", "skus"})
MOMENT_NEEDS: Final = {"birthday": (), "anniversary": (), "win_back": ("inactive_days",)}
MOMENT_TAKES: Final = {
    "birthday": frozenset({"window_days"}),
    "anniversary": frozenset({"window_days"}),
    "win_back": frozenset({"inactive_days"}),
}


class _Problems:
    def __init__(self) -> None:
        self.fields: dict[str, list[str]] = {}

    def add(self, field: str, sentence: str) -> None:
        self.fields.setdefault(field, []).append(sentence)

    def integer(self, values: Mapping[str, object], field: str, low: int, *, optional: bool = False) -> None:
        value = values.get(field)
        if value is None and optional:
            return
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= INT32_MAX:
            self.add(field, f"The {field} must be a whole number from {low} to {INT32_MAX}.")

    def name(self, values: Mapping[str, object]) -> None:
        name = values.get("name")
        if not isinstance(name, str) or not name.strip() or len(name) > NAME_MAX:
            self.add("name", f"The name must be 1 to {NAME_MAX} characters.")

    def flag(self, values: Mapping[str, object], field: str) -> None:
        if not isinstance(values.get(field), bool):
            self.add(field, f"The {field} must be true or false.")

    def raise_any(self, message: str) -> None:
        if self.fields:
            raise ValidationFailed(message, self.fields)


def earn_rule(values: Mapping[str, object]) -> dict[str, object]:
    """An earn rule's fields, checked: ``unit_amount`` >= 1, ``points_per_unit`` and
    ``min_transaction_amount`` >= 0."""
    problems = _Problems()
    problems.name(values)
    problems.integer(values, "points_per_unit", 0)
    problems.integer(values, "unit_amount", 1)
    problems.integer(values, "min_transaction_amount", 0)
    problems.flag(values, "active")
    problems.raise_any("The earn rule is not valid.")
    return {field: values[field] for field in EARN_RULE_FIELDS}


def campaign(values: Mapping[str, object]) -> dict[str, object]:
    """A campaign's fields, checked; ``multiplier`` comes back a ``Decimal`` and the lists as lists."""
    problems = _Problems()
    cleaned = {field: values.get(field) for field in CAMPAIGN_FIELDS}
    problems.name(values)
    family, kind, moment = cleaned["family"], cleaned["kind"], cleaned["moment"]
    if family not in FAMILIES:
        problems.add("family", f"The family must be one of: {', '.join(FAMILIES)}.")
    if kind not in KINDS:
        problems.add("kind", f"The kind must be one of: {', '.join(KINDS)}.")
    _kind_fields(problems, cleaned, kind)
    _moment_fields(problems, cleaned, family, moment)
    if cleaned["multiplier"] is not None:
        cleaned["multiplier"] = _multiplier(problems, cleaned["multiplier"])
    problems.integer(cleaned, "points", 1, optional=True)
    problems.integer(cleaned, "max_points_per_transaction", 1, optional=True)
    problems.integer(cleaned, "window_days", 1, optional=True)
    problems.integer(cleaned, "inactive_days", 1, optional=True)
    problems.integer(cleaned, "min_transaction_amount", 0)
    problems.flag(cleaned, "combinable")
    problems.flag(cleaned, "active")
    if cleaned["skus"] is not None:
        cleaned["skus"] = _strings(problems, "skus", cleaned["skus"], 1, MAX_SKUS, SKU_MAX)
    if cleaned["branches"] is not None:
        cleaned["branches"] = _strings(problems, "branches", cleaned["branches"], 1, None, 64)
    starts_on, ends_on = cleaned["starts_on"], cleaned["ends_on"]
    for field, day in (("starts_on", starts_on), ("ends_on", ends_on)):
        if day is not None and (not isinstance(day, date) or isinstance(day, datetime)):
            problems.add(field, f"The {field} must be a date.")
    if isinstance(starts_on, date) and isinstance(ends_on, date) and ends_on < starts_on:
        problems.add("ends_on", "The ends_on date must be on or after starts_on.")
    problems.raise_any("The campaign is not valid.")
    return cleaned


def _kind_fields(problems: _Problems, values: Mapping[str, object], kind: object) -> None:
    """EARN-13: the fields a kind needs are required for it; a field of another kind is refused,
    so no stored value is silently ignored by the engine."""
    needs = KIND_NEEDS.get(kind, ()) if isinstance(kind, str) else ()
    for field in needs:
        if values.get(field) is None:
            problems.add(field, f"A {kind} campaign needs {field}.")
    for field in sorted(KIND_TAKES - set(needs)):
        if values.get(field) is not None and isinstance(kind, str) and kind in KINDS:
            problems.add(field, f"A {kind} campaign takes no {field}.")


def _moment_fields(problems: _Problems, values: Mapping[str, object], family: object, moment: object) -> None:
    if family == Family.TRANSACTION:
        for field in ("moment", "window_days", "inactive_days"):
            if values.get(field) is not None:
                problems.add(field, f"A transaction campaign takes no {field}; it is for customer_moment campaigns.")
        return
    if family != Family.CUSTOMER_MOMENT:
        return
    if moment not in MOMENTS:
        problems.add("moment", f"A customer_moment campaign needs a moment, one of: {', '.join(MOMENTS)}.")
        return
    assert isinstance(moment, str)
    for field in MOMENT_NEEDS[moment]:
        if values.get(field) is None:
            problems.add(field, f"A {moment} campaign needs {field}.")
    for field in sorted({"window_days", "inactive_days"} - MOMENT_TAKES[moment]):
        if values.get(field) is not None:
            problems.add(field, f"A {moment} campaign takes no {field}.")


def _multiplier(problems: _Problems, value: object) -> Decimal | None:
    """EARN-13: a number above 1, decimals allowed; at most four decimals, so what is stored is
    exactly what was sent."""
    try:
        number = value if isinstance(value, Decimal) else Decimal(str(value))
    except InvalidOperation:
        number = None
    if isinstance(value, bool) or number is None or not number.is_finite():
        problems.add("multiplier", "The multiplier must be a number above 1.")
        return None
    if not Decimal(1) < number < MULTIPLIER_LIMIT:
        problems.add("multiplier", f"The multiplier must be above 1 and below {MULTIPLIER_LIMIT}.")
    elif number != number.quantize(Decimal(1).scaleb(-MULTIPLIER_PLACES)):
        problems.add("multiplier", f"The multiplier may have at most {MULTIPLIER_PLACES} decimals.")
    return number


def _strings(problems: _Problems, field: str, value: object, low: int, high: int | None, longest: int) -> list[str]:
    items = list(value) if isinstance(value, Sequence) and not isinstance(value, str) else None
    if items is None or not all(isinstance(item, str) and 1 <= len(item) <= longest for item in items):
        problems.add(field, f"The {field} must be a list of strings of 1 to {longest} characters.")
        return []
    if len(items) < low or (high is not None and len(items) > high):
        bound = f"{low} to {high}" if high is not None else f"at least {low}"
        problems.add(field, f"The {field} must hold {bound} entries.")
    return [str(item) for item in items]
