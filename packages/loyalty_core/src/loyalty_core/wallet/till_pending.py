"""Pending points (PENDING-1 to PENDING-9): what a purchase earns while its vendor's ``pending_days``
is above 0 waits in ``pending_points`` until its instant, with no ledger entry, as expired lots leave
the balance without one until a write expires them (LEDGER-9's pattern, in reverse).

- The purchase's own statement writes the row (:data:`PENDING_CTES`, after its transaction's CTE ``t``)
  and lowers the wallet's ``pending_next_at``, the soonest instant of its pending points: a read or a
  write of a wallet whose ``pending_next_at`` is NULL or later than now looks no further, so a shop
  without pending points pays nothing for them.
- Reads count the points whose instant has passed (:data:`AVAILABLE_SQL`, :func:`available_points`)
  and never write.
- Every write to the wallet first writes their ``earn`` entries (:func:`make_available`), through the
  ledger's one writer (``till_posting.posting_statement``), dated their instant, in the order of their
  instants, each opening a lot that ends ``points_expire_after_days`` after that instant; each records
  ``points.available``. The ``pending-points`` job does it for the wallets nobody touched
  (``wallet/jobs_pending.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from psycopg import AsyncConnection
from psycopg.rows import dict_row
from sqlalchemy import ColumnElement, Select, case, func, or_, select

from loyalty_core.events.services.recording import deliveries_of, dumps, event_ctes, new_event_id, payload_sql
from loyalty_core.till_sql import Params, bound, statements_of
from loyalty_core.wallet.events import PointsAvailable
from loyalty_core.wallet.models import EntryType, PendingPoints
from loyalty_core.wallet.till_posting import (
    LEDGER_EVENTS,
    PostingParams,
    entry_params,
    posting_statement,
)

SQL = statements_of(__name__)

REFERRAL_REASON: Final = "referral"
"""The ``reason`` of a ``referral`` entry (REFERRAL-15)."""


PENDING_CTES: Final = (
    f"""pending AS (
    INSERT INTO pending_points
        (id, vendor_id, wallet_id, transaction_id, entry_type, points, available_at, lot_expires_at, causer_type,
         causer_id, created_at, updated_at)
    SELECT nextval('pending_points_id_seq'), %(vendor_id)s, %(wallet_id)s, t.id, '{EntryType.EARN}', %(pending_points)s,
           %(available_at)s, %(pending_lot_ends)s, %(causer_type)s, %(causer_id)s, %(now)s, %(now)s
    FROM t WHERE %(pending_points)s > 0
    RETURNING 1
)""",
    """pending_next AS (
    UPDATE wallets SET pending_next_at = least(pending_next_at, %(available_at)s)
    WHERE vendor_id = %(vendor_id)s AND id = %(wallet_id)s AND EXISTS (SELECT 1 FROM pending)
)""",
)
"""The CTEs a purchase's statement adds after its transaction ``t`` when its vendor's setting is above
0 (its posting's amount is then 0: no entry, no lot, the wallet's balance untouched)."""


AVAILABLE_SQL: Final = """CASE WHEN w.pending_next_at <= %(now)s THEN coalesce((
           SELECT sum(p.points) FROM pending_points p
           WHERE p.vendor_id = w.vendor_id AND p.wallet_id = w.id AND p.available_at <= %(now)s
             AND (p.lot_expires_at IS NULL OR p.lot_expires_at > %(now)s)), 0) ELSE 0 END"""
"""What a read of wallet ``w`` at ``%(now)s`` adds to its balance (PENDING-4): the pending points
whose instant has passed, but for those whose lot would have ended by now (written, then expired)."""


def available_points(vendor_id: Any, wallet_id: Any, now: datetime) -> Select[tuple[int]]:
    """:data:`AVAILABLE_SQL` for the ORM's reads; ``vendor_id``, ``wallet_id``: values or a
    wallet row's columns (a correlated read)."""
    p = PendingPoints.__table__.c
    return select(func.coalesce(func.sum(p.points), 0)).where(
        p.vendor_id == vendor_id,
        p.wallet_id == wallet_id,
        p.available_at <= now,
        or_(p.lot_expires_at.is_(None), p.lot_expires_at > now),
    )


def available_and_expiring(vendor_id: int, wallet_id: int, now: datetime, until: datetime) -> Select[tuple[int, int]]:
    """:func:`available_points`, and of them those whose lot will end after ``now`` and by ``until``:
    what the wallet's ``expiring_soon`` counts of them, as it would once their entry opened that lot
    (PENDING-4: a read shows the same whether the entry is written yet or not)."""
    p = PendingPoints.__table__.c
    return select(
        func.coalesce(func.sum(p.points), 0),
        func.coalesce(func.sum(p.points).filter(p.lot_expires_at <= until), 0),
    ).where(
        p.vendor_id == vendor_id,
        p.wallet_id == wallet_id,
        p.available_at <= now,
        or_(p.lot_expires_at.is_(None), p.lot_expires_at > now),
    )


def available_shown(wallet: Any, now: datetime) -> ColumnElement[int]:
    """:func:`available_points` of the wallet row ``wallet`` (a table's columns, ``.c``), read only
    when its ``pending_next_at`` says some are due: what a read adds to the balance (PENDING-4)."""
    due = available_points(wallet.vendor_id, wallet.id, now).scalar_subquery()
    return case((wallet.pending_next_at <= now, due), else_=0)


def still_pending(vendor_id: Any, wallet_id: Any, now: datetime) -> Select[tuple[int, datetime | None]]:
    """The wallet's points still pending at ``now`` and the soonest instant among them."""
    p = PendingPoints.__table__.c
    return select(func.coalesce(func.sum(p.points), 0), func.min(p.available_at)).where(
        p.vendor_id == vendor_id, p.wallet_id == wallet_id, p.available_at > now
    )


class WalletDue(Params, frozen=True):
    vendor_id: int
    wallet_id: int
    now: datetime


class MadeAvailable(PostingParams, frozen=True):
    """The posting of one pending row's entry, dated its instant (``now``), and its event, recorded at
    ``available_event_at`` (the write's own instant), so the event feed keeps the order in which events
    were recorded (EVENT-12)."""

    pending_id: int
    available_event_wanted: bool
    """False for points that were available at once (a referral's at 0 days): no ``points.available``."""
    available_event_id: str
    available_event_data: str
    available_event_at: datetime


_DUE = SQL(
    "due",
    """
SELECT id, entry_type, points, available_at, lot_expires_at, causer_type, causer_id, created_at
FROM pending_points
WHERE vendor_id = %(vendor_id)s AND wallet_id = %(wallet_id)s AND available_at <= %(now)s
ORDER BY available_at, id
""",
    WalletDue,
)

_MAKE_AVAILABLE = SQL(
    "make_available",
    posting_statement(
        after=(
            """made AS (
    DELETE FROM pending_points
    WHERE vendor_id = %(vendor_id)s AND id = %(pending_id)s AND EXISTS (SELECT 1 FROM ledger_entry)
)""",
            event_ctes(
                "available_event",
                source="ledger_entry x CROSS JOIN ledger_balance b WHERE %(available_event_wanted)s",
                data="CAST(%(available_event_data)s AS jsonb)"
                " || jsonb_build_object('id', x.id, 'running_balance', x.running_balance)",
                customer="b.customer_id",
                vendor="%(vendor_id)s",
                at="%(available_event_at)s",
                **payload_sql(PointsAvailable),
            ),
        ),
        select=f"running_balance, {deliveries_of('available_event', *LEDGER_EVENTS)} AS deliveries FROM ledger_entry",
    ),
    MadeAvailable,
)

_NEXT = SQL(
    "next",
    """
UPDATE wallets w SET pending_next_at = (
    SELECT min(p.available_at) FROM pending_points p WHERE p.vendor_id = w.vendor_id AND p.wallet_id = w.id
)
WHERE w.vendor_id = %(vendor_id)s AND w.id = %(wallet_id)s
""",
    WalletDue,
)


def is_due(pending_next_at: datetime | None, now: datetime) -> bool:
    """Whether a wallet whose ``pending_next_at`` reads so holds points that became available."""
    return pending_next_at is not None and pending_next_at <= now


@dataclass(frozen=True, slots=True)
class Made:
    """What :func:`make_available` wrote: the webhook deliveries its events created, and the
    wallet's balance after it (None when nothing was due)."""

    deliveries: int = 0
    balance: int | None = None


async def make_available(conn: AsyncConnection[Any], vendor_id: int, wallet_id: int, now: datetime) -> Made:
    """Write the ``earn`` entries of the wallet's pending points whose instant has passed by ``now``,
    oldest instant first, each dated its instant with its ``points.available``, then the wallet's next
    instant; the caller holds the wallet locked (the write protocol's lock, or the job's). How many
    webhook deliveries the events created. Only a write that finds the wallet due (:func:`is_due`)
    calls it: one round trip for the due rows, one per entry, one for the next instant."""
    params = bound(WalletDue(vendor_id=vendor_id, wallet_id=wallet_id, now=now))
    async with conn.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(_DUE, params, prepare=True)
        due = await cursor.fetchall()
    deliveries, balance = 0, None
    async with conn.cursor(row_factory=dict_row) as cursor:
        for row in due:
            at: datetime = row["available_at"]
            kind = row["entry_type"] or EntryType.EARN
            posting = entry_params(
                vendor_id=vendor_id,
                wallet_id=wallet_id,
                kind=kind,
                # REFERRAL-15: a referral's entry says so; a purchase's earn entry has no reason
                reason=REFERRAL_REASON if kind == EntryType.REFERRAL else None,
                amount=row["points"],
                causer_type=row["causer_type"],
                causer_id=row["causer_id"],
                now=at,
                opened=[(row["points"], row["lot_expires_at"])],
            )
            shown = PointsAvailable(
                0,
                wallet_id,
                posting.entry_type,
                posting.amount,
                0,
                posting.reason,
                posting.causer_type,
                posting.causer_id,
                at,
            )
            made = MadeAvailable(
                **bound(posting),
                pending_id=row["id"],
                # PENDING-9: none for points that were available at once (a referral's at 0 days)
                available_event_wanted=at > row["created_at"],
                available_event_id=new_event_id(now),
                available_event_data=dumps(shown),
                available_event_at=now,
            )
            await cursor.execute(_MAKE_AVAILABLE, bound(made), prepare=True)
            written = await cursor.fetchone()
            if written is not None:
                deliveries += written["deliveries"]
                balance = written["running_balance"]
        await cursor.execute(_NEXT, params, prepare=True)
    return Made(deliveries, balance)


CANCEL_PENDING = (
    """pending_gone AS (
    DELETE FROM pending_points
    WHERE vendor_id = %(vendor_id)s AND id = %(pending_id)s AND points = %(pending_cancelled)s
)""",
    """pending_less AS (
    UPDATE pending_points SET points = points - %(pending_cancelled)s, updated_at = %(now)s
    WHERE vendor_id = %(vendor_id)s AND id = %(pending_id)s AND points > %(pending_cancelled)s
)""",
)
"""A return's CTEs that cancel what is still pending of its own purchase (PENDING-6): the row goes
when all of it is cancelled, else it shrinks."""


def own_pending(rows: list[list[Any]] | None, now: datetime, due: int) -> tuple[int | None, int]:
    """The purchase's pending row still waiting at ``now`` and how many of ``due`` it cancels."""
    for pending_id, points, at in rows or ():
        if datetime.fromisoformat(at) > now:
            cancelled = min(due, int(points))
            return (pending_id, cancelled) if cancelled > 0 else (None, 0)
    return None, 0
