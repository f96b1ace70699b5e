"""The back office's reads of a shop's ledger beyond one wallet: its entries over a range of days,
streamed for the export. (One wallet's balance and entries are ``wallet.services.reads``.)"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Final

from sqlalchemy import Select, and_, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_core.listing import stream_rows
from loyalty_core.wallet.models import LedgerEntry, Wallet

LEDGER_COLUMNS: Final = (
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
"""The columns of :func:`ledger_rows`, in order: an export's header row."""


def _entries(vendor_id: int, first: date | None, last: date | None) -> Select[Any]:
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


def ledger_rows(
    sessionmaker: async_sessionmaker[AsyncSession], vendor_id: int, first: date | None, last: date | None
) -> AsyncIterator[Sequence[Sequence[Any]]]:
    """The shop's entries of days ``first`` to ``last`` (UTC, both inclusive; None: open), oldest
    first, a chunk of rows at a time, each row the :data:`LEDGER_COLUMNS`. Read when iterated, in a
    session of its own."""
    return stream_rows(sessionmaker, _entries(vendor_id, first, last))
