"""What a load costs PostgreSQL, read from PostgreSQL itself (``bench.pg_cost``): per statement
(``pg_stat_statements``), per wait event (``pg_stat_activity`` sampled), MultiXacts
(``pg_control_checkpoint()``'s ``next_multixact_id``, current only after a ``CHECKPOINT``, which counts
the whole cluster's) and the rows of the bench database that carry one made during the run
(``pageinspect``: which rows concurrent writers share-locked, by table and member lock modes), WAL
bytes (``pg_current_wal_lsn()``), commits and index/heap block touches of the bench database; and,
on the bench's own cluster (whose WAL it can read), the WAL written meanwhile by relation and record
kind (``pg_waldump`` over the run's range: what each part of a request's WAL is).

Needs a superuser connection to a cluster that preloads ``pg_stat_statements`` (``bench._cluster``).
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

Conn = psycopg.Connection[tuple[object, ...]]

_COUNTERS = """
SELECT (SELECT next_multixact_id::text::bigint FROM pg_control_checkpoint()),
       pg_current_wal_lsn() - '0/0'::pg_lsn,
       (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()),
       (SELECT coalesce(sum(heap_blks_hit + heap_blks_read), 0) FROM pg_statio_user_tables),
       (SELECT coalesce(sum(idx_blks_hit + idx_blks_read), 0) FROM pg_statio_user_tables),
       (SELECT coalesce(sum(seq_scan), 0) FROM pg_stat_user_tables),
       (SELECT coalesce(sum(seq_tup_read), 0) FROM pg_stat_user_tables),
       (SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_user_tables),
       (SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_tables)
"""

_STATEMENTS = """
SELECT s.query, s.calls, s.total_exec_time, s.shared_blks_hit + s.shared_blks_read, s.shared_blks_dirtied,
       s.wal_bytes, s.wal_fpi, s.toplevel
  FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
 WHERE d.datname = current_database() AND s.query NOT LIKE '%%pg_stat%%' AND s.query NOT LIKE '%%pg_control%%'
"""

_WAITS = """
SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') FROM pg_stat_activity
 WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()
"""


@dataclass(frozen=True)
class Statement:
    query: str
    calls: int
    total_ms: float
    blocks: int
    """Shared blocks hit or read."""
    dirtied: int
    wal_bytes: int
    fpi: int
    """Full-page images written to the WAL (the first change of a page after a checkpoint)."""
    toplevel: bool
    """Sent by the client; a nested one (a foreign key's check, run by the executor) is counted in its
    top-level statement's figures too."""


@dataclass
class Cost:
    multixacts: int
    wal_bytes: int
    commits: int
    heap_blocks: int
    index_blocks: int
    seq_scans: int
    seq_rows: int
    statements: list[Statement]
    waits: Counter[str] = field(default_factory=Counter)
    samples: int = 0
    wal_parts: Counter[str] = field(default_factory=Counter)
    """WAL bytes (records with their full-page images) by "relation: resource manager record"; empty
    where the cluster's WAL is not readable here."""
    wal_images: Counter[str] = field(default_factory=Counter)
    """The full-page images' part of ``wal_parts`` (a page's first change after a checkpoint)."""
    table_blocks: Counter[str] = field(default_factory=Counter)
    """Shared blocks touched (hit or read) per table, its indexes with it (``pg_statio_user_tables``)."""
    multixact_rows: Counter[str] = field(default_factory=Counter)
    """Row versions whose xmax is a MultiXact made during the run, by "table: member modes" (a
    lower bound: a version pruned before the census is not seen)."""
    rows_written: int = 0
    """Rows inserted, updated or deleted in the bench database's tables (``pg_stat_user_tables``:
    ``n_tup_ins + n_tup_upd + n_tup_del``; a foreign key's or a trigger's writes included)."""
    index_scans: int = 0
    """Index scans begun on the bench database's tables (``pg_stat_user_tables.idx_scan``)."""
    table_rows: Counter[str] = field(default_factory=Counter)
    """``rows_written`` by table."""


# "rmgr: Heap  len (rec/tot): 79/ 79, tx: 735, lsn: ..., desc: INSERT off 3 ..., blkref #0: rel 1663/16385/16424"
_RECORD = re.compile(
    r"^rmgr: (\S+)\s+len \(rec/tot\):\s*(\d+)/\s*(\d+),.*?desc: (\S+)(?:.*?blkref #0: rel \d+/(\d+)/(\d+))?"
)


def wal_parts(conn: Conn, start: str, end: str) -> tuple[Counter[str], Counter[str]]:
    """The WAL between two positions by relation (of the bench database; another's is "other
    database") and record kind, read with ``pg_waldump`` from ``LOYALTY_BENCH_PG_DATA``: all the
    bytes, and those of full-page images."""
    data = os.environ.get("LOYALTY_BENCH_PG_DATA")
    if not data:
        return Counter(), Counter()
    waldump = Path(os.environ.get("LOYALTY_BENCH_PG_BIN", "/usr/lib/postgresql/15/bin")) / "pg_waldump"
    argv = [str(waldump), "-p", str(Path(data) / "pg_wal"), "-s", start, "-e", end]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    row = conn.execute("SELECT oid FROM pg_database WHERE datname = current_database()").fetchone()
    database = str(row[0]) if row else ""
    names = {str(n): str(r) for n, r in conn.execute("SELECT pg_relation_filenode(oid), relname FROM pg_class")}
    parts: Counter[str] = Counter()
    images: Counter[str] = Counter()
    for line in done.stdout.splitlines():
        found = _RECORD.match(line)
        if not found:
            continue
        rmgr, record, size, kind, db, node = found.groups()
        where = "-" if node is None else names.get(node, node) if db == database else "other database"
        parts[f"{where}: {rmgr} {kind}"] += int(size)
        images[f"{where}: {rmgr} {kind}"] += int(size) - int(record)
    return parts, images


_TABLE_BLOCKS = """
SELECT relname, heap_blks_hit + heap_blks_read + coalesce(idx_blks_hit + idx_blks_read, 0)
  FROM pg_statio_user_tables
"""


def _table_blocks(conn: Conn) -> Counter[str]:
    return Counter({str(name): int(str(n)) for name, n in conn.execute(_TABLE_BLOCKS).fetchall()})


_TABLE_ROWS = "SELECT relname, n_tup_ins + n_tup_upd + n_tup_del FROM pg_stat_user_tables"


def _table_rows(conn: Conn) -> Counter[str]:
    return Counter({str(name): int(str(n)) for name, n in conn.execute(_TABLE_ROWS).fetchall()})


# every row version of the table (dead ones not yet pruned too) whose xmax is a MultiXact (HEAP_XMAX_IS_MULTI)
_MULTI_XMAX = """
SELECT t_xmax::text::bigint FROM generate_series(0, pg_relation_size(%(table)s::text::regclass) / 8192 - 1) AS b,
       heap_page_items(get_raw_page(%(table)s::text, b::int))
 WHERE t_infomask & 4096 <> 0
"""
_MEMBERS = "SELECT string_agg(mode, '+' ORDER BY mode) FROM pg_get_multixact_members(%s::text::xid)"


def multixact_rows(conn: Conn, since: int, sampled: int = 200) -> Counter[str]:
    """Row versions of the bench database's tables whose xmax is a MultiXact numbered ``since`` or
    later, by "table: member lock modes" (the modes read for up to ``sampled`` per table): where
    concurrent transactions shared a row's lock. Needs ``pageinspect``."""
    found: Counter[str] = Counter()
    tables = conn.execute(
        "SELECT relname FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace ORDER BY 1"
    ).fetchall()
    for (table,) in tables:
        multis = [int(str(m)) for (m,) in conn.execute(_MULTI_XMAX, {"table": str(table)}).fetchall()]
        multis = [m for m in multis if m >= since]
        for n, multi in enumerate(multis):
            modes = "modes not read"
            if n < sampled:
                try:
                    row = conn.execute(_MEMBERS, (str(multi),)).fetchone()
                    modes = str(row[0]) if row else "?"
                except psycopg.Error:  # already truncated by a vacuum
                    modes = "members gone"
            found[f"{table}: {modes}"] += 1
    return found


def _counters(conn: Conn) -> tuple[int, ...]:
    # pg_statio is flushed by backends at most once a second when idle: the caller waits for that
    conn.execute("SELECT pg_stat_clear_snapshot()")
    row = conn.execute(_COUNTERS).fetchone()
    assert row is not None
    return tuple(int(str(x)) for x in row)


def _lsn(conn: Conn) -> str:
    row = conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()
    assert row is not None
    return str(row[0])


class Watch:
    """``with Watch(conn): <load>``; then ``.cost``. Samples active backends' wait events every 20 ms."""

    def __init__(self, conn: Conn, sampler: Conn) -> None:
        self._conn, self._sampler = conn, sampler
        self._stop = threading.Event()
        self._waits: Counter[str] = Counter()
        self._samples = 0
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            rows = self._sampler.execute(_WAITS).fetchall()
            self._samples += 1
            self._waits.update(str(r[0]) for r in rows)

    def __enter__(self) -> Watch:
        self._conn.execute("CHECKPOINT")
        self._start = _lsn(self._conn)
        self._before = _counters(self._conn)
        self._tables = _table_blocks(self._conn)  # read in the same snapshot as the counters
        self._rows = _table_rows(self._conn)
        self._conn.execute("SELECT pg_stat_statements_reset()")
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        statements = [
            Statement(str(q), int(str(c)), float(str(t)), int(str(b)), int(str(d)), int(str(w)), int(str(f)), bool(top))
            for q, c, t, b, d, w, f, top in self._conn.execute(_STATEMENTS).fetchall()
        ]
        end = _lsn(self._conn)
        # read before the CHECKPOINT, which may recycle the run's WAL segments
        parts, images = wal_parts(self._conn, self._start, end)
        self._conn.execute("CHECKPOINT")
        after = _counters(self._conn)
        tables = _table_blocks(self._conn) - self._tables
        table_rows = _table_rows(self._conn) - self._rows
        shared = multixact_rows(self._conn, self._before[0])
        m, wal, commits, heap, index, scans, rows, written, index_scans = (
            a - b for a, b in zip(after, self._before, strict=True)
        )
        self.cost = Cost(
            m,
            wal,
            commits,
            heap,
            index,
            scans,
            rows,
            statements,
            self._waits,
            self._samples,
            parts,
            images,
            tables,
            shared,
            written,
            index_scans,
            table_rows,
        )


def ensure_extension(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            conn.execute("CREATE EXTENSION IF NOT EXISTS pageinspect")
            conn.execute("SELECT 1 FROM pg_stat_statements LIMIT 1")
        except psycopg.Error as error:
            raise SystemExit(
                f"this bench needs pg_stat_statements preloaded: run it with LOYALTY_BENCH_OWN_POSTGRES=1 ({error})"
            ) from error
