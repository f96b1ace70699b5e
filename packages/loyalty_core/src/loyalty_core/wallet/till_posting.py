"""The one writer of ledger entries: every change of a balance is written by the statement built
here, whichever path makes it (a till's adjustment, purchase or redemption; the portal's cancel,
give and merge; the expiry job), so one place keeps the invariant: balance = sum of the wallet's
ledger amounts = the last entry's running balance >= 0, and the open lots hold the balance.

:func:`posting_statement` builds every statement that posts an entry, and is the only thing that
can: the posting's CTEs (private here) move the balance, write the entry, open its lots (credit) and
take points from the lots it names (debit, as ``rules.take`` chose them, soonest-ending first). A
caller's own rows ride in the same statement, as CTEs before the posting (those its gate reads: a
redemption's stock take, a purchase's plan meter) and after it (a purchase's transaction and lines,
a redemption's row, pointing at the entry), and the statement's final ``SELECT`` is the caller's.
When the gate is false nothing is written. The entry is the CTE ``ledger_entry`` (columns
:data:`ENTRY_COLUMNS`) for the caller's rows to point at. Its parameters are the fields of
:class:`PostingParams`, which a caller's statement struct extends; :func:`entry_params` computes them.

The same statement records the entries' events (EVENT-3, EVENT-4): ``points.expired`` for the
expire entry a debit writes first, always, and the caller's event for its own entry when it names
one (``points.adjusted`` for an adjustment, ``points.expired`` for the expiry job; none for a
purchase's, a return's or a redemption's entry, whose own event tells it, nor for a merge's).
Their ``data`` is the entry as the API shows it; the ids and running balances the statement draws
are filled in by the statement. :data:`LEDGER_EVENTS` names them for ``deliveries_of``.

Every caller holds the wallet row locked (``FOR UPDATE``) before it decides, or, for a credit that
decides nothing on the balance, takes that lock with this statement's ``UPDATE``; the running
balance is the locked row's balance plus the amount, so it cannot be stale.

:func:`write_entry` runs the statement alone on a connection: the till's adjustment does, and
``Posting.post`` does for every caller that holds an ORM session, on that session's connection.

The expiry job's batch (:func:`write_expiry_batch`, LEDGER-4) is the one statement that posts for many
wallets at once: what ``Posting.expire_due`` writes for each, its parameters built by
``wallet/till_expiry.py`` from the due groups it read under the wallets' locks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from loyalty_core.events.services.recording import deliveries_of, dumps, event_ctes, new_event_id, payload_sql
from loyalty_core.till_sql import Params, bound, statements_of
from loyalty_core.wallet.events import EntryPayload, PointsExpired
from loyalty_core.wallet.models import CauserType, EntryType
from loyalty_core.wallet.resources import LedgerEntry
from loyalty_core.wallet.rules import Take

SQL = statements_of(__name__)

EXPIRED_REASON = "expired"

ENTRY_COLUMNS = "id, wallet_id, type, amount, running_balance, reason, causer_type, causer_id, created_at"
"""The entry's columns as the wire shows them, in :class:`LedgerEntry`'s order."""


LEDGER_EVENTS = ("ledger_expired_event", "ledger_entry_event")
"""The events the posting may record, for ``deliveries_of``."""

_DRAWN = "CAST(%({name}_data)s AS jsonb) || jsonb_build_object('id', x.id, 'running_balance', x.running_balance)"


def _entry_event(name: str, entry: str, *, kind: str, version: str, gate: str = "") -> str:
    return event_ctes(
        name,
        source=f"{entry} x CROSS JOIN ledger_balance b{gate}",
        data=_DRAWN.format(name=name),
        customer="b.customer_id",
        vendor="%(vendor_id)s",
        at="%(now)s",
        kind=kind,
        version=version,
    )


class PostingParams(Params, frozen=True):
    """The posting's placeholders; the struct of every statement that posts extends it (fields from
    :func:`entry_params`)."""

    vendor_id: int
    wallet_id: int | None
    now: datetime
    entry_type: str
    amount: int
    reason: str | None
    causer_type: str
    causer_id: str | None
    entry_key: str | None
    lot_points: list[int]
    lot_ends: list[datetime | None]
    expired_points: int
    """What the expire entries written first take, 0 for none."""
    expired_each: list[int]
    expired_at: list[datetime]
    """The points of each ``expire`` entry written first and the instant its lots ended, which dates
    it (LIABILITY-3): one entry per instant, oldest first."""
    entry_at: datetime
    """The entry's ``created_at``: ``now``, or an expiry's instant (LIABILITY-3)."""
    take_ids: list[int]
    take_points: list[int]
    ledger_expired_event_ids: list[str]
    ledger_expired_event_datas: list[str]
    ledger_entry_event_id: str | None
    ledger_entry_event_type: str | None
    """None: the entry records no event of its own."""
    ledger_entry_event_version: int | None
    ledger_entry_event_data: str | None


def _posting_ctes(*, gate: str) -> str:
    """The CTEs that post one entry on wallet ``%(wallet_id)s`` of vendor ``%(vendor_id)s``, when
    ``gate`` (SQL of the caller's, over its own CTEs) holds. A zero amount writes nothing."""
    # A debit, or an adjustment's credit, first expires the lots whose end has passed
    # (``%(expired_points)s``, 0 for none): an ``expire`` entry per instant their lots ended, dated
    # then, as the nightly job writes them (LIABILITY-3), drawn before the entry's own (the aggregate over
    # ``ledger_expired`` is read first), so the ledger reads expiry then the entry.
    return f"""ledger_balance AS (
    UPDATE wallets SET balance = balance - %(expired_points)s + %(amount)s, updated_at = %(now)s
    WHERE vendor_id = %(vendor_id)s AND id = %(wallet_id)s AND %(amount)s <> 0 AND ({gate})
    RETURNING balance, customer_id
), ledger_expired AS (
    INSERT INTO ledger_entries
        (id, vendor_id, wallet_id, type, amount, running_balance, reason, causer_type, causer_id,
         idempotency_key, created_at, updated_at)
    SELECT nextval('ledger_entries_id_seq'), %(vendor_id)s, %(wallet_id)s, '{EntryType.EXPIRE}', -g.points,
           b.balance - %(amount)s + %(expired_points)s - g.upto, '{EXPIRED_REASON}', '{CauserType.SYSTEM}', NULL,
           NULL, g.at, %(now)s
    FROM ledger_balance b CROSS JOIN (
        SELECT points, at, n, sum(points) OVER (ORDER BY n) AS upto
        FROM unnest(%(expired_each)s::bigint[], %(expired_at)s::timestamptz[]) WITH ORDINALITY AS u(points, at, n)
    ) g
    ORDER BY g.n
    RETURNING id, running_balance, created_at
), ledger_entry AS (
    INSERT INTO ledger_entries
        (id, vendor_id, wallet_id, type, amount, running_balance, reason, causer_type, causer_id,
         idempotency_key, created_at, updated_at)
    SELECT nextval('ledger_entries_id_seq'), %(vendor_id)s, %(wallet_id)s, %(entry_type)s, %(amount)s, b.balance,
           %(reason)s, %(causer_type)s, %(causer_id)s, %(entry_key)s, %(entry_at)s, %(now)s
    FROM ledger_balance b CROSS JOIN (SELECT count(*) FROM ledger_expired) x
    RETURNING {ENTRY_COLUMNS}
), ledger_lots_opened AS (
    INSERT INTO point_lots
        (id, vendor_id, wallet_id, entry_id, points, remaining, expires_at, created_at, updated_at)
    SELECT nextval('point_lots_id_seq'), %(vendor_id)s, %(wallet_id)s, e.id, l.points, l.points, l.ends, %(now)s,
           %(now)s
    FROM ledger_entry e, unnest(%(lot_points)s::bigint[], %(lot_ends)s::timestamptz[]) AS l(points, ends)
), ledger_lots_taken AS (
    UPDATE point_lots p SET remaining = p.remaining - t.points, updated_at = %(now)s
    FROM ledger_entry e, unnest(%(take_ids)s::bigint[], %(take_points)s::bigint[]) AS t(id, points)
    WHERE p.vendor_id = %(vendor_id)s AND p.id = t.id AND p.wallet_id = %(wallet_id)s
), {_expired_events()}, {
        _entry_event(
            LEDGER_EVENTS[1],
            "ledger_entry",
            kind=f"CAST(%({LEDGER_EVENTS[1]}_type)s AS text)",
            version=f"CAST(%({LEDGER_EVENTS[1]}_version)s AS smallint)",
            gate=f" WHERE CAST(%({LEDGER_EVENTS[1]}_type)s AS text) IS NOT NULL",
        )
    }"""


def _expired_events() -> str:
    """``points.expired`` for each ``expire`` entry written first, its id and payload the one of its
    instant (EVENT-4)."""
    name = LEDGER_EVENTS[0]
    return event_ctes(
        name,
        source=f"""ledger_expired x CROSS JOIN ledger_balance b JOIN unnest(
            %({name}_ids)s::text[], %({name}_datas)s::text[], %(expired_at)s::timestamptz[]
        ) AS ev(id, data, at) ON ev.at = x.created_at""",
        data="CAST(ev.data AS jsonb) || jsonb_build_object('id', x.id, 'running_balance', x.running_balance)",
        customer="b.customer_id",
        vendor="%(vendor_id)s",
        at="%(now)s",
        event_id="ev.id",
        **payload_sql(PointsExpired),
    )


def posting_statement(*, before: Sequence[str] = (), gate: str = "true", after: Sequence[str] = (), select: str) -> str:
    """``WITH <before>, <the posting>, <after> SELECT <select>``: each of ``before`` and ``after`` is
    one or more of the caller's CTEs (``name AS (...)``), ``gate`` SQL over ``before`` that must hold
    for anything to be written, ``select`` what follows the final ``SELECT``."""
    # The order is the caller's and is kept: a CTE may only name those before it, and the text is a
    # prepared statement's, so the same call builds the same text.
    ctes = ", ".join((*before, _posting_ctes(gate=gate), *after))
    return f"WITH {ctes}\nSELECT {select}"


def entry_params(
    *,
    vendor_id: int,
    wallet_id: int | None,
    kind: str,
    amount: int,
    causer_type: str,
    causer_id: str | None,
    now: datetime,
    reason: str | None = None,
    key: str | None = None,
    opened: Iterable[tuple[int, datetime | None]] = (),
    taken: Sequence[Take] = (),
    expired: Sequence[Take] = (),
    event: type[EntryPayload] | None = None,
    entry_at: datetime | None = None,
) -> PostingParams:
    """The posting's parameters (a caller's own statement takes them into its struct, which extends
    :class:`PostingParams`, as ``**bound(...)``): a credit names the lots it opens (points, end), a
    debit the points it takes from each lot and the lots past their end it expires first
    (``rules.split_due``); ``event``: the event of the entry itself, if it has one."""
    points, ends = [], []
    for p, end in opened:
        points.append(p)
        ends.append(end)
    expired_points = sum(t.points for t in expired)
    at = now if entry_at is None else entry_at
    # one expire entry per instant the lots ended, dated then (LIABILITY-3)
    by_end: dict[datetime, int] = {}
    for t in expired:
        end = t.ends or now
        by_end[end] = by_end.get(end, 0) + t.points
    instants = sorted(by_end)
    # an event the statement will not record draws no id and encodes nothing (the till's hot path)
    gone_ids = [new_event_id(now) for _ in instants]
    gone_datas = [
        dumps(
            shown_entry(
                PointsExpired, wallet_id, EntryType.EXPIRE, -by_end[end], EXPIRED_REASON, CauserType.SYSTEM, None, end
            )
        )
        for end in instants
    ]
    own_id = own_type = own_version = own_data = None
    if event is not None:
        own_id, own_type, own_version = new_event_id(now), str(event.event_type), event.version
        own_data = dumps(shown_entry(event, wallet_id, kind, amount, reason, causer_type, causer_id, at))
    return PostingParams(
        vendor_id=vendor_id,
        wallet_id=wallet_id,
        now=now,
        entry_type=str(kind),
        amount=amount,
        reason=reason,
        causer_type=str(causer_type),
        causer_id=causer_id,
        entry_key=key,
        lot_points=points,
        lot_ends=ends,
        expired_points=expired_points,
        expired_each=[by_end[end] for end in instants],
        expired_at=instants,
        entry_at=at,
        take_ids=[t.lot_id for t in (*expired, *taken)],
        take_points=[t.points for t in (*expired, *taken)],
        ledger_expired_event_ids=gone_ids,
        ledger_expired_event_datas=gone_datas,
        ledger_entry_event_id=own_id,
        ledger_entry_event_type=own_type,
        ledger_entry_event_version=own_version,
        ledger_entry_event_data=own_data,
    )


def shown_entry(
    event: type[EntryPayload],
    wallet_id: int | None,
    kind: str,
    amount: int,
    reason: str | None,
    causer_type: str,
    causer_id: str | None,
    at: datetime,
) -> EntryPayload:
    """The entry as the API shows it, but for the id and running balance the statement draws."""
    return event(0, wallet_id or 0, str(kind), amount, 0, reason, str(causer_type), causer_id, at)


_POST = SQL(
    "post",
    posting_statement(select=f"{ENTRY_COLUMNS}, {deliveries_of(*LEDGER_EVENTS)} AS deliveries FROM ledger_entry"),
    PostingParams,
)


class ExpiryBatchParams(Params, frozen=True):
    """The expiry job's batch (LEDGER-4): one row per ``expire`` entry, in the order of the entries
    (wallet by wallet, each wallet's instants oldest first), built by ``till_expiry.expiry_batch_params``."""

    now: datetime
    vendor_ids: list[int]
    wallet_ids: list[int]
    customer_ids: list[int]
    points: list[int]
    ended: list[datetime]
    """The instant the entry's lots ended, which dates it (LIABILITY-3)."""
    running_balances: list[int]
    event_ids: list[str]
    event_datas: list[str]


_BATCH_EVENT = "batch_expired_event"


def _expiry_batch_statement() -> str:
    """The expire entries of many wallets the caller has locked, in one statement: the balances
    lowered, the entries written, their lots emptied, one ``points.expired`` each (EVENT-4)."""
    events = event_ctes(
        _BATCH_EVENT,
        source="batch_entries x JOIN batch_groups g"
        " ON g.vendor_id = x.vendor_id AND g.wallet_id = x.wallet_id AND g.ended = x.created_at",
        data="CAST(g.event_data AS jsonb) || jsonb_build_object('id', x.id, 'running_balance', x.running_balance)",
        customer="g.customer_id",
        vendor="x.vendor_id",
        at="%(now)s",
        event_id="g.event_id",
        **payload_sql(PointsExpired),
    )
    return f"""WITH batch_groups AS (
    SELECT * FROM unnest(
        %(vendor_ids)s::bigint[], %(wallet_ids)s::bigint[], %(customer_ids)s::bigint[], %(points)s::bigint[],
        %(ended)s::timestamptz[], %(running_balances)s::bigint[], %(event_ids)s::text[], %(event_datas)s::text[]
    ) WITH ORDINALITY AS g(vendor_id, wallet_id, customer_id, points, ended, running_balance, event_id, event_data, n)
), batch_balances AS (
    UPDATE wallets w SET balance = w.balance - t.points, updated_at = %(now)s
    FROM (SELECT vendor_id, wallet_id, sum(points) AS points FROM batch_groups GROUP BY vendor_id, wallet_id) t
    WHERE w.vendor_id = t.vendor_id AND w.id = t.wallet_id
), batch_entries AS (
    INSERT INTO ledger_entries
        (id, vendor_id, wallet_id, type, amount, running_balance, reason, causer_type, causer_id,
         idempotency_key, created_at, updated_at)
    SELECT nextval('ledger_entries_id_seq'), g.vendor_id, g.wallet_id, '{EntryType.EXPIRE}', -g.points,
           g.running_balance, '{EXPIRED_REASON}', '{CauserType.SYSTEM}', NULL, NULL, g.ended, %(now)s
    FROM batch_groups g
    ORDER BY g.n
    RETURNING id, vendor_id, wallet_id, running_balance, created_at
), batch_lots AS (
    UPDATE point_lots p SET remaining = 0, updated_at = %(now)s
    FROM batch_groups g
    WHERE p.vendor_id = g.vendor_id AND p.wallet_id = g.wallet_id AND p.expires_at = g.ended AND p.remaining > 0
), {events}
SELECT (SELECT count(*) FROM batch_entries) AS entries, {deliveries_of(_BATCH_EVENT)} AS deliveries"""


_EXPIRE_BATCH = SQL("expire_batch", _expiry_batch_statement(), ExpiryBatchParams)


async def write_expiry_batch(conn: AsyncConnection[Any], params: ExpiryBatchParams) -> tuple[int, int]:
    """Write a batch's expire entries (one statement) on wallets the caller has locked; how many
    entries it wrote and how many webhook deliveries their events created."""
    async with conn.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(_EXPIRE_BATCH, bound(params), prepare=True)
        written = await cursor.fetchone()
    assert written is not None  # an aggregate answers one row
    return int(written["entries"]), int(written["deliveries"])


async def write_entry(conn: AsyncConnection[Any], params: PostingParams) -> tuple[LedgerEntry, int]:
    """Post one entry (one prepared statement) on a wallet the caller has locked; the entry and how
    many webhook deliveries its events created."""
    async with conn.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(_POST, bound(params), prepare=True)
        written = await cursor.fetchone()
    assert written is not None  # the wallet is locked by the caller and the amount is not zero
    deliveries = written.pop("deliveries")
    return LedgerEntry(**written), deliveries
