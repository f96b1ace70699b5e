"""Reading request bodies and query strings into plain values (INPUT-3 to INPUT-9).

JSON, ``application/x-www-form-urlencoded`` and ``multipart/form-data`` bodies all become one
mapping that goes through the same validation; any other type with a body answers 415. These
answers come before the token check (AUTH-8).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl

import msgspec
from litestar import Request
from multipart import MultipartSegment, ParserError, ParserLimitReached, PushMultipartParser

from loyalty_http.wire.errors import InputInvalid, InvalidJson, PayloadTooLarge, UnsupportedMediaType

MAX_JSON_DEPTH = 64
"""Also the deepest a form or multipart key may nest (``a[b][c]`` is three levels)."""
DEPTH_MESSAGE = f"The field is nested deeper than {MAX_JSON_DEPTH} levels."
MAX_PARTS = 1000
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
UNREAD_FIELD = "This endpoint does not read this field."
JSON_AS_FORM = (
    "The body looks like JSON but was sent with a form content type; send it with Content-Type: application/json."
)

_BRACKETS = re.compile(r"\[([^\]]*)\]")


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def is_json_type(media: str) -> bool:
    return media in ("", "application/json") or (media.startswith("application/") and media.endswith("+json"))


DRAIN_BYTES = 1_048_576
"""How far past the limit a refused body is still read, and dropped: a client still sending when the
413 is decided then reads its answer, where a server that stops reading and closes leaves it a reset
connection (a broken pipe on its next write). A larger body is cut off there."""


async def read_raw(request: Request[Any, Any, Any], max_bytes: int) -> bytes:
    """The body bytes, refused with 413 as soon as they pass ``max_bytes`` (before any parsing)."""
    too_large = PayloadTooLarge(f"The request body is larger than {max_bytes} bytes.")
    announced = request.headers.get("content-length")
    stream = request.stream()
    if announced is not None and announced.isdigit() and int(announced) > max_bytes:
        await _drain(stream, 0, max_bytes + DRAIN_BYTES)
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in stream:
        size += len(chunk)
        if size > max_bytes:
            await _drain(stream, size, max_bytes + DRAIN_BYTES)
            raise too_large
        chunks.append(chunk)
    raw = b"".join(chunks)
    request._body = raw  # later readers (the multipart parser) see the bytes already received
    return raw


async def _drain(stream: AsyncIterator[bytes], read: int, up_to: int) -> None:
    """Read and drop the rest of a refused body, stopping once ``up_to`` bytes have been read."""
    while read <= up_to:
        try:
            read += len(await anext(stream))
        except StopAsyncIteration:
            return


async def read_body(request: Request[Any, Any, Any], fields: frozenset[str], max_bytes: int) -> Any:
    """The body as plain values; ``fields`` are the top-level names the endpoint reads."""
    raw = await read_raw(request, max_bytes)
    if not raw:
        return {}
    media = media_type(request.headers.get("content-type"))
    if is_json_type(media):
        return decode_json(raw)
    if media == "application/x-www-form-urlencoded":
        return nest_form(parse_pairs(raw), fields, looks_json=raw.lstrip()[:1] in (b"{", b"["))
    elif media == "multipart/form-data":
        pairs = parse_multipart(raw, request.headers.get("content-type", ""))
    else:
        raise UnsupportedMediaType("The body's Content-Type cannot be read; send JSON, a form or multipart.")
    return nest_form(pairs, fields)


class BigNumber(str):
    """A JSON number no field here can hold (``1e309``, thousands of digits), kept as its text so
    validation refuses it on its field, as it refuses the same text in a form body."""

    __slots__ = ()


_BIG_DIGITS = 30
"""Integers with more digits than this stay text: converting one of thousands of digits costs
quadratic time (Python refuses past 4,300), and no field takes more than 19."""
_CUT_OFF = "The JSON body is cut off or not valid UTF-8; nothing was changed."


def decode_json(raw: bytes) -> Any:
    try:
        text = raw.decode("utf-8")
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        if "out of range" not in str(exc):
            raise InvalidJson(_CUT_OFF) from exc
        # valid JSON whose number is too large for a float or an integer: a field error, not a syntax one
        value = _decode_keeping_big_numbers(text)
    except (UnicodeDecodeError, RecursionError) as exc:
        raise InvalidJson(_CUT_OFF) from exc
    if _depth_exceeds(value, MAX_JSON_DEPTH):
        raise InvalidJson(f"The JSON body is nested deeper than {MAX_JSON_DEPTH} levels.")
    return value


def _decode_keeping_big_numbers(text: str) -> Any:
    """The JSON with its out-of-range numbers as ``BigNumber`` text; a body that is no JSON stays 400."""
    try:
        return json.loads(text, parse_int=_whole, parse_float=_decimal, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise InvalidJson(_CUT_OFF) from exc


def _whole(text: str) -> int | BigNumber:
    return BigNumber(text) if len(text.lstrip("-").lstrip("0")) > _BIG_DIGITS else int(text)


def _decimal(text: str) -> float | BigNumber:
    number = float(text)
    return BigNumber(text) if math.isinf(number) else number


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not JSON")


def _depth_exceeds(value: Any, limit: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            if depth > limit:
                return True
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            if depth > limit:
                return True
            stack.extend((v, depth + 1) for v in item)
    return False


def parse_pairs(raw: bytes) -> list[tuple[str, str]]:
    """Percent-decoded pairs; bytes that are not UTF-8 survive as lone surrogates for validation to name."""
    text = raw.decode("utf-8", errors="surrogateescape")
    return parse_qsl(text, keep_blank_values=True, encoding="utf-8", errors="surrogateescape")


def parse_multipart(raw: bytes, content_type: str) -> list[tuple[str, str]]:
    """Names and values of a multipart body, read like a urlencoded form: bytes that are not UTF-8, in
    a name as in a value, survive as lone surrogates for validation to name (INPUT-9);
    a file part contributes its file name."""
    boundary = (
        dict(p.strip().split("=", 1) for p in content_type.split(";")[1:] if "=" in p).get("boundary", "").strip('"')
    )
    if not boundary:
        raise InvalidJson("The multipart body names no boundary.")
    pairs: list[tuple[str, str]] = []
    try:
        with PushMultipartParser(boundary, header_charset="latin-1", max_segment_count=MAX_PARTS) as parser:
            segment: MultipartSegment | None = None
            data = bytearray()
            for chunk in (raw, b""):
                for part in parser.parse(chunk):
                    if isinstance(part, MultipartSegment):
                        segment, data = part, bytearray()
                    elif part:
                        data.extend(part)
                    elif segment is not None:
                        value = _text(segment.filename) if segment.filename else data.decode("utf-8", "surrogateescape")
                        pairs.append((_text(segment.name), value))
                        segment = None
            if not parser.closed:
                raise ParserError("the body ends inside a part")
    except (ParserError, ParserLimitReached) as exc:
        raise InvalidJson("The multipart body is malformed; nothing was changed.") from exc
    return pairs


def printable(value: Any) -> Any:
    """``value`` (text, or lists and mappings of it) with bytes that were not UTF-8 shown as U+FFFD,
    for echoing what a caller sent back in an answer."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if isinstance(value, Mapping):
        return {printable(k): printable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [printable(v) for v in value]
    return value


def _text(latin: str) -> str:
    return latin.encode("latin-1", "replace").decode("utf-8", "surrogateescape")


def nest_form(pairs: Iterable[tuple[str, str]], fields: frozenset[str], *, looks_json: bool = False) -> dict[str, Any]:
    """Form keys such as ``identifiers[0][type]`` become nested values; a form reading none of the
    endpoint's fields is refused with each key it held (INPUT-9). When the
    body ``looks_json`` (curl without ``Content-Type: application/json``), the message says so."""
    out: dict[str, Any] = {}
    too_deep: dict[str, list[str]] = {}
    for key, value in pairs:
        head, _, rest = key.partition("[")
        path = [head] + (_BRACKETS.findall("[" + rest) if rest else [])
        if len(path) > MAX_JSON_DEPTH:
            too_deep[head] = [DEPTH_MESSAGE]
            continue
        _place(out, path, value)
    if too_deep:
        raise InputInvalid(too_deep)
    if out and not (out.keys() & fields):
        details = {key: [UNREAD_FIELD] for key in out}
        raise InputInvalid(details, JSON_AS_FORM) if looks_json else InputInvalid(details)
    return out


def _place(target: dict[str, Any], path: list[str], value: str) -> None:
    node: Any = target
    for index, part in enumerate(path):
        last = index == len(path) - 1
        if part == "":
            part = str(len(node))
        if last:
            node[part] = value
        else:
            nxt = node.get(part)
            if not isinstance(nxt, dict):
                nxt = node[part] = {}
            node = nxt


def indexed_list(value: Any) -> list[Any] | None:
    """A form's ``items[0][name]`` keys arrive as a mapping of indexes: its values in index order.
    Only ASCII digits index (``²`` or ``٣`` are no index); None when the mapping is not a list."""
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and k.isascii() and k.isdigit() and len(k) <= 9 for k in value
    ):
        return None
    return [value[k] for k in sorted(value, key=int)]


def query_values(query_string: bytes, fields: frozenset[str]) -> dict[str, Any]:
    """The query string as plain values; keys the endpoint does not read are ignored."""
    pairs = parse_pairs(query_string)
    nested: dict[str, str] = {}
    for key, value in pairs:
        head = key.partition("[")[0]
        if head in fields:
            nested.setdefault(key, value)
    return nest_form(nested.items(), fields) if nested else {}


def as_mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
