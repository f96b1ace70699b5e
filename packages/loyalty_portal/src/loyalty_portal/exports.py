"""The shop's CSV exports: its customers, and its ledger over a range of days, streamed.

Rows come from a server-side cursor in chunks of :data:`CHUNK` and leave as CSV text chunk by chunk,
so an export of any size holds one chunk in memory. A text cell a spreadsheet would read as a
formula (starting with ``=``, ``+``, ``-`` or ``@``, or a tab or carriage return that hides one) is
prefixed with ``'``; numbers and dates are written by the service and stay numbers.
"""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator, Iterable, Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import Select, and_, func, literal, select
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_core.customers.models import Customer, CustomerIdentifier, CustomerStatus, IdentifierType
from loyalty_core.wallet.models import LedgerEntry, Wallet

CHUNK = 1_000
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

CUSTOMER_HEADER = (
    "id",
    "external_id",
    "first_name",
    "last_name",
    "email",
    "phone",
    "date_of_birth",
    "status",
    "cards",
    "balance",
    "created_at",
)
LEDGER_HEADER = (
    "id",
    "customer_id",
    "created_at",
    "type",
    "amount",
    "running_balance",
    "reason",
    "causer_type",
    "causer_id",
)


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


def customers_query(vendor_id: int) -> Select[Any]:
    cards = (
        select(func.string_agg(CustomerIdentifier.value, aggregate_order_by(literal(" "), CustomerIdentifier.id)))
        .where(
            CustomerIdentifier.vendor_id == vendor_id,
            CustomerIdentifier.customer_id == Customer.id,
            CustomerIdentifier.type == IdentifierType.LOYALTY_CARD,
            CustomerIdentifier.active.is_(True),
        )
        .scalar_subquery()
    )
    return (
        select(
            Customer.id,
            Customer.external_id,
            Customer.first_name,
            Customer.last_name,
            Customer.email,
            Customer.phone,
            Customer.date_of_birth,
            Customer.status,
            cards,
            func.coalesce(Wallet.balance, 0),
            Customer.created_at,
        )
        .outerjoin(Wallet, and_(Wallet.vendor_id == Customer.vendor_id, Wallet.customer_id == Customer.id))
        .where(Customer.vendor_id == vendor_id, Customer.status != CustomerStatus.ANONYMIZED)
        .order_by(Customer.id)
    )


def ledger_query(vendor_id: int, first: date | None, last: date | None) -> Select[Any]:
    """The entries of days ``first`` to ``last`` (UTC, both inclusive; None: open), oldest first."""
    query = (
        select(
            LedgerEntry.id,
            Wallet.customer_id,
            LedgerEntry.created_at,
            LedgerEntry.type,
            LedgerEntry.amount,
            LedgerEntry.running_balance,
            LedgerEntry.reason,
            LedgerEntry.causer_type,
            LedgerEntry.causer_id,
        )
        .join(Wallet, and_(Wallet.vendor_id == LedgerEntry.vendor_id, Wallet.id == LedgerEntry.wallet_id))
        .where(LedgerEntry.vendor_id == vendor_id)
        .order_by(LedgerEntry.id)
    )
    if first is not None:
        query = query.where(LedgerEntry.created_at >= datetime.combine(first, time(), UTC))
    if last is not None:
        query = query.where(LedgerEntry.created_at < datetime.combine(last + timedelta(days=1), time(), UTC))
    return query


async def stream_csv(
    sessionmaker: async_sessionmaker[AsyncSession], header: Sequence[str], query: Select[Any]
) -> AsyncIterator[bytes]:
    """The header, then the rows a chunk at a time, read in a session of the export's own (the
    request's session has answered by the time the body is sent)."""
    yield lines([header])
    async with sessionmaker() as session:
        result = await session.stream(query.execution_options(yield_per=CHUNK))
        async for part in result.partitions():
            yield lines(part)
