"""The shop's CSV exports: its customers, and its ledger over a range of days, streamed.

Rows come from core's reads (``accounts.reads.customer_rows``, ``wallet.reads.ledger_rows``) a chunk
at a time and leave as CSV text chunk by chunk, so an export of any size holds one chunk in memory.
A text cell a spreadsheet would read as a formula (starting with ``=``, ``+``, ``-`` or ``@``, or a
tab or carriage return that hides one) is prefixed with ``'``; numbers and dates are written by the
service and stay numbers.
"""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: str) -> str:
    """A text cell a spreadsheet would run as a formula is shown as text instead (INPUT-20)."""
    return "'" + value if value.startswith(FORMULA_STARTS) else value


def cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    if isinstance(value, str):
        return safe_cell(value)
    return value


def lines(rows: Iterable[Sequence[Any]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerows([cell(v) for v in row] for row in rows)
    return buffer.getvalue().encode()


async def stream_csv(header: Sequence[str], rows: AsyncIterator[Sequence[Sequence[Any]]]) -> AsyncIterator[bytes]:
    """The header, then the rows as CSV text a chunk at a time, as core's read streams them."""
    yield lines([header])
    async for part in rows:
        yield lines(part)
