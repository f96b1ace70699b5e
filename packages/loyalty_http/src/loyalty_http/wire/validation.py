"""Input validation with its messages (INPUT-7 to INPUT-10, INPUT-17 to INPUT-19).

msgspec structs declare the fields and their bounds; this module walks their type information
and checks every field, so one request gets every failing field at once, each with messages
shaped like ``validation.required`` (built-in rules) or an English sentence (rules of the
service). Text is trimmed of white space and NUL bytes first; an empty optional field counts as
omitted (INPUT-8).

Extra rules ride on ``msgspec.Meta(extra={"rule": ...})``: ``email``, ``url`` (absolute http or
https), ``datetime_or_date`` (a timestamp with offset, or a bare date), ``number`` (a float that
is checked; a bare float passes as given), ``single_line`` (text that reaches a mail header or a
pass: no control character; add ``SingleLine`` to a field's ``Annotated``) and ``kept_empty`` (an
optional text whose empty value the service refuses by a rule of its own instead of taking it as
omitted: a referral code, REFERRAL-7).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime
from functools import cache
from typing import Any, TypeVar
from urllib.parse import urlsplit

import msgspec
from msgspec import inspect as mi

from loyalty_core.clock import midnight_utc
from loyalty_core.text import CONTROL, CONTROL_MESSAGE, SURROGATE, is_email
from loyalty_http.wire.body import BigNumber, indexed_list
from loyalty_http.wire.errors import InputInvalid
from loyalty_http.wire.numbers import check_float, check_int
from loyalty_http.wire.slots import FAIL, TRIMMED, Slot, fail

S = TypeVar("S", bound=msgspec.Struct)


NUL_MESSAGE = "The value must not contain NUL bytes."
UTF8_MESSAGE = "The value is not valid UTF-8."
BASE64_MESSAGE = "The value must be base64-encoded."
WRONG_TYPE_MESSAGE = "The value has the wrong type."
BIG_NUMBER_MESSAGE = "The number is out of range."

SINGLE_LINE = "x-single-line"
"""The OpenAPI document's mark of a ``single_line`` field (it becomes a pattern there)."""
SingleLine = msgspec.Meta(extra={"rule": "single_line"}, extra_json_schema={SINGLE_LINE: True})
"""A shop's name, a pass's display name, a branch's name: a CR or LF in a mail header would split
it (every card mail of the shop failing), and wallets show control characters raw."""

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def validate(struct_type: type[S], raw: Any) -> S:
    """Check ``raw`` (decoded JSON, form fields or query parameters) against ``struct_type``."""
    errors: dict[str, list[str]] = {}
    values = _check_struct(struct_type, raw if isinstance(raw, Mapping) else {}, "", errors)
    if errors:
        raise InputInvalid(errors)
    try:
        instance = msgspec.convert(values, struct_type)
    except msgspec.ValidationError as exc:
        # a shape the checks above let through (they cover the types the API uses): still a 422
        raise InputInvalid({_path_of(str(exc)): [WRONG_TYPE_MESSAGE]}) from exc
    check = getattr(instance, "check", None)
    if check is not None:
        rule_errors: Mapping[str, list[str]] = check()
        if rule_errors:
            raise InputInvalid(dict(rule_errors))
    return instance


def _path_of(message: str) -> str:
    """The field a msgspec error names (``... - at `$.items[0].sku` ``), in this API's dotted form."""
    found = re.search(r"at `\$\.?([^`]*)`", message)
    return (found.group(1) if found else "").replace("[", ".").replace("]", "") or "body"


def _check_bytes(slot: Slot, value: Any, path: str, errors: dict[str, list[str]]) -> Any:
    """Binary values (a pass's images) travel as standard base64 text."""
    if isinstance(value, str) and not isinstance(value, BigNumber) and len(value) % 4 == 0:
        try:
            base64.b64decode(value, validate=True)
            return value
        except (binascii.Error, ValueError):
            pass
    return fail(errors, path, BASE64_MESSAGE)


@cache
def field_names(struct_type: type[msgspec.Struct]) -> frozenset[str]:
    # a struct's fields never change: worked out once, not on every request that reads its query
    return frozenset(f.encode_name for f in _fields(struct_type))


@cache
def _fields(struct_type: type[msgspec.Struct]) -> tuple[mi.Field, ...]:
    info = mi.type_info(struct_type)
    assert isinstance(info, mi.StructType)
    return info.fields


@cache
def _slotted(struct_type: Any) -> tuple[tuple[mi.Field, Slot], ...]:
    """Each field with its slot: a field's slot is a function of its type alone, worked out once."""
    return tuple((field, _slot(field.type)) for field in _fields(struct_type))


def _slot(t: Any) -> Slot:
    rule = None
    nullable = False
    while True:
        if isinstance(t, mi.Metadata):
            rule = (t.extra or {}).get("rule", rule)
            t = t.type
            continue
        if isinstance(t, mi.UnionType):
            rest = [m for m in t.types if not isinstance(m, mi.NoneType)]
            nullable = nullable or len(rest) < len(t.types)
            if len(rest) == 1:
                t = rest[0]
                continue
            return Slot(type=mi.UnionType(tuple(rest)), nullable=nullable, rule=rule)
        return Slot(type=t, nullable=nullable, rule=rule)


def type_key(t: Any) -> str:
    if isinstance(t, (mi.IntType, mi.FloatType)):
        return "validation.numeric"
    if isinstance(t, mi.BoolType):
        return "validation.boolean"
    if isinstance(t, (mi.ListType, mi.DictType, mi.StructType)):
        return "validation.array"
    if isinstance(t, (mi.DateType, mi.DateTimeType)):
        return "validation.date"
    return "validation.string"


def _check_struct(
    struct_type: Any, raw: Mapping[str, Any], prefix: str, errors: dict[str, list[str]]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field, slot in _slotted(struct_type):
        key = field.encode_name
        path = f"{prefix}{key}"
        if key not in raw:
            if field.required:
                errors[path] = ["validation.required"]
            continue
        value = _trimmed(raw[key])
        if value == "" and slot.rule == "kept_empty":
            out[key] = value
            continue
        if value is None or value == "":
            if field.required:
                errors[path] = [type_key(slot.type), "validation.required"]
            elif value is None and slot.nullable:
                out[key] = None
            elif value is None:
                errors[path] = [type_key(slot.type), "validation.required"]
            continue
        checked = _check(slot, value, path, errors)
        if checked is not FAIL:
            out[key] = checked
    return out


def _trimmed(value: Any) -> Any:
    """Text trimmed of white space and NUL bytes; an out-of-range number stays what it is."""
    if isinstance(value, str) and not isinstance(value, BigNumber):
        return value.strip(TRIMMED)
    return value


def _check(slot: Slot, value: Any, path: str, errors: dict[str, list[str]]) -> Any:
    checker = _CHECKERS.get(type(slot.type))
    if checker is None:
        return value
    return checker(slot, value, path, errors)


def _check_str(slot: Slot, value: Any, path: str, errors: dict[str, list[str]]) -> Any:
    t = slot.type
    if not isinstance(value, str) or isinstance(value, BigNumber):
        return fail(errors, path, "validation.string")
    value = value.strip(TRIMMED)
    if SURROGATE.search(value):
        return fail(errors, path, UTF8_MESSAGE)
    if "\x00" in value:
        return fail(errors, path, NUL_MESSAGE)
    if t.max_length is not None and len(value) > t.max_length:
        return fail(errors, path, "validation.max.string")
    if t.min_length is not None and len(value) < t.min_length:
        return fail(errors, path, "validation.min.string")
    if t.pattern is not None and not re.search(t.pattern, value):
        return fail(errors, path, "validation.regex")
    if slot.rule == "single_line" and CONTROL.search(value):
        return fail(errors, path, CONTROL_MESSAGE)
    if slot.rule == "email" and not is_email(value):
        return fail(errors, path, "validation.email")
    if slot.rule == "url" and not _is_web_url(value):
        return fail(errors, path, "validation.url")
    if slot.rule == "datetime_or_date" and parse_datetime_or_date(value) is None:
        return fail(errors, path, "validation.date")
    return value


def _is_web_url(value: str) -> bool:
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc) and " " not in value


def parse_datetime_or_date(value: str) -> datetime | date | None:
    """A bare ``YYYY-MM-DD`` date, or an ISO 8601 timestamp with an offset; a 5-digit year fails."""
    if _DATE.fullmatch(value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            return None
    if not re.match(r"\d{4}-\d{2}-\d{2}[T ]", value):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("z", "Z"))
        # an offset at either end of the calendar puts the UTC instant outside it
        parsed.astimezone(UTC)
    except (ValueError, OverflowError):
        return None
    return parsed if parsed.tzinfo is not None else None


_TRUE = {"1", "true", "on", "yes"}
_FALSE = {"0", "false", "off", "no"}


def _check_bool(slot: Slot, value: Any, path: str, errors: dict[str, list[str]]) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        lowered = value.strip(TRIMMED).lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
    return fail(errors, path, "validation.boolean")


def _check_date(slot: Slot, value: Any, path: str, errors: dict[str, list[str]]) -> Any:
    if isinstance(value, str) and _DATE.fullmatch(value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    return fail(errors, path, "validation.date")


def _check_datetime(slot: Slot, value: Any, path: str, errors: dict[str, list[str]]) -> Any:
    """A timestamp with a UTC offset, or a bare date read as midnight UTC."""
    parsed = parse_datetime_or_date(value) if isinstance(value, str) else None
    if parsed is None:
        return fail(errors, path, "validation.date")
    return midnight_utc(parsed).astimezone(UTC)


def _check_literal(slot: Slot, value: Any, path: str, errors: dict[str, list[str]]) -> Any:
    if isinstance(value, str):
        value = value.strip(TRIMMED)
    if value in slot.type.values and not isinstance(value, bool):
        return value
    if isinstance(value, str) and "\x00" in value:
        return fail(errors, path, NUL_MESSAGE)
    return fail(errors, path, "validation.in")


def _check_enum(slot: Slot, value: Any, path: str, errors: dict[str, list[str]]) -> Any:
    """A core ``StrEnum`` (statuses, types, locales): one of its values, as that member."""
    if isinstance(value, str):
        value = value.strip(TRIMMED)
        try:
            return slot.type.cls(value)
        except ValueError:
            if "\x00" in value:
                return fail(errors, path, NUL_MESSAGE)
    return fail(errors, path, "validation.in")


def _check_list(slot: Slot, value: Any, path: str, errors: dict[str, list[str]]) -> Any:
    t = slot.type
    if isinstance(value, Mapping):
        value = indexed_list(value)
    if not isinstance(value, list):
        return fail(errors, path, "validation.array")
    if t.max_length is not None and len(value) > t.max_length:
        return fail(errors, path, "validation.max.array")
    if t.min_length is not None and len(value) < t.min_length:
        return fail(errors, path, "validation.min.array")
    item_slot = _slot(t.item_type)
    out = []
    failed = False
    for index, item in enumerate(value):
        item_path = f"{path}.{index}"
        item = _trimmed(item)
        if item is None or item == "":
            errors.setdefault(item_path, []).extend([type_key(item_slot.type), "validation.required"])
            failed = True
            continue
        checked = _check(item_slot, item, item_path, errors)
        failed = failed or checked is FAIL
        out.append(checked)
    return FAIL if failed else out


def _check_union(slot: Slot, value: Any, path: str, errors: dict[str, list[str]]) -> Any:
    """The first member type the value satisfies; otherwise the first member's messages."""
    first: dict[str, list[str]] | None = None
    for member in slot.type.types:
        scratch: dict[str, list[str]] = {}
        checked = _check(_slot(member), value, path, scratch)
        if checked is not FAIL and not scratch:
            return checked
        first = first if first is not None else scratch
    for key, messages in (first or {path: ["validation.invalid"]}).items():
        errors.setdefault(key, []).extend(messages)
    return FAIL


def _check_nested(slot: Slot, value: Any, path: str, errors: dict[str, list[str]]) -> Any:
    if not isinstance(value, Mapping):
        return fail(errors, path, "validation.array")
    before = len(errors)
    out = _check_struct(slot.type.cls, value, f"{path}.", errors)
    return FAIL if len(errors) > before else out


def _check_dict(slot: Slot, value: Any, path: str, errors: dict[str, list[str]]) -> Any:
    if not isinstance(value, Mapping):
        return fail(errors, path, "validation.array")
    problem = _free_text_problem(value)
    if problem is not None:
        return fail(errors, path, problem)
    return value


def _free_text_problem(value: Any) -> str | None:
    """NUL bytes and broken UTF-8 anywhere inside free-form data, keys included."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, BigNumber):
            return BIG_NUMBER_MESSAGE
        if isinstance(item, str):
            if SURROGATE.search(item):
                return UTF8_MESSAGE
            if "\x00" in item:
                return NUL_MESSAGE
        elif isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


_CHECKERS: dict[type, Callable[[Slot, Any, str, dict[str, list[str]]], Any]] = {
    mi.StrType: _check_str,
    mi.BytesType: _check_bytes,
    mi.IntType: check_int,
    mi.FloatType: check_float,
    mi.BoolType: _check_bool,
    mi.DateType: _check_date,
    mi.DateTimeType: _check_datetime,
    mi.LiteralType: _check_literal,
    mi.EnumType: _check_enum,
    mi.ListType: _check_list,
    mi.StructType: _check_nested,
    mi.DictType: _check_dict,
    mi.UnionType: _check_union,
}
