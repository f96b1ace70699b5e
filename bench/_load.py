"""Load and what it costs: a wrk run, the CPU the server processes and the database's backends spend
meanwhile (from /proc), and the database sessions opened meanwhile (``pg_stat_database.sessions``,
PostgreSQL 15); and the rounds and report every service-against-raw benchmark shares."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import psycopg

from bench._servers import Server, start_raw, start_service
from bench._support import SERVER, scratch_database

LUA = Path(__file__).parent / "wrk" / "request_path.lua"
TICK = os.sysconf("SC_CLK_TCK")
THREADS = 2
"""wrk's threads (a script that splits its data between them is told this number)."""


@dataclass(frozen=True)
class WrkResult:
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    errors: dict[str, int]
    """wrk's error counts by kind: connect, read, write, timeout, status (replies of 400 and above)."""
    p95_ms: float = 0.0
    """Reported by the scripts that write it (bench/wrk/mix.lua)."""

    @property
    def rate(self) -> float:
        return self.requests / self.seconds


@dataclass(frozen=True)
class Measured:
    wrk: WrkResult
    server_cpu: float
    """Percent of one core, all server processes together."""
    database_cpu: float
    """Percent of one core, the bench database's backends together."""
    new_sessions: int
    peak_backends: int
    """The most backends of the bench database seen at once (sampled twice a second)."""
    load1: float


def wrk(
    url: str,
    call: str,
    customers: Path,
    token: str,
    prefix: str,
    seconds: float,
    connections: int,
    *,
    script: Path = LUA,
    extra: tuple[str, ...] = (),
) -> WrkResult:
    """One wrk run of ``script`` (arguments: call, data file, token, key prefix, then ``extra``)."""
    argv = ["wrk", f"-t{THREADS}", f"-c{connections}", f"-d{seconds:g}s", "--timeout", "10s", "-s", str(script), url]
    argv += ["--", call, str(customers), token, prefix, *extra]
    done = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=seconds + 60)
    line = next((x for x in done.stdout.splitlines() if x.startswith("WRK_JSON ")), None)
    if line is None:
        raise RuntimeError(f"wrk gave no summary:\n{done.stdout}\n{done.stderr}")
    raw = json.loads(line.removeprefix("WRK_JSON "))
    errors = {k: raw[k] for k in ("connect", "read", "write", "timeout", "status") if raw[k]}
    return WrkResult(
        raw["requests"],
        raw["duration_us"] / 1e6,
        raw["p50_us"] / 1000,
        raw["p99_us"] / 1000,
        errors,
        raw.get("p95_us", 0) / 1000,
    )


def _ticks(pid: int) -> int | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return int(fields[11]) + int(fields[12])  # utime + stime


def process_tree(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    found, queue = [pid], [pid]
    while queue:
        parent = queue.pop()
        try:
            tasks = list(Path(f"/proc/{parent}/task").iterdir())
        except FileNotFoundError:
            continue
        for task in tasks:
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except FileNotFoundError:
                continue
            found += children
            queue += children
    return found


class CpuWatch:
    """CPU ticks of the server's processes and of the database's backends, sampled twice a second so
    a backend that starts and ends within the window is counted too (up to its last sample)."""

    def __init__(self, server_pid: int, conn: psycopg.Connection[tuple[object, ...]], database: str) -> None:
        self._server_pid, self._conn, self._database = server_pid, conn, database
        self._own = conn.info.backend_pid
        self._first: dict[tuple[str, int], int] = {}
        self._last: dict[tuple[str, int], int] = {}
        self.peak_backends = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _backends(self) -> list[int]:
        rows = self._conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> %s", (self._database, self._own)
        ).fetchall()
        return [int(str(r[0])) for r in rows]

    def _sample(self, *, baseline: bool) -> None:
        backends = self._backends()
        self.peak_backends = max(self.peak_backends, len(backends))
        for kind, pids in (("server", process_tree(self._server_pid)), ("database", backends)):
            for pid in pids:
                ticks = _ticks(pid)
                if ticks is None:
                    continue
                # a process first seen after the start was born in the window: all its time counts
                self._first.setdefault((kind, pid), ticks if baseline else 0)
                self._last[(kind, pid)] = ticks

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            self._sample(baseline=False)

    def __enter__(self) -> CpuWatch:
        self._sample(baseline=True)
        self._started = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample(baseline=False)
        self.seconds = time.monotonic() - self._started

    def percent(self, kind: str) -> float:
        ticks = sum(last - self._first[key] for key, last in self._last.items() if key[0] == kind)
        return 100 * ticks / TICK / self.seconds


def sessions(conn: psycopg.Connection[tuple[object, ...]], database: str) -> int:
    row = conn.execute("SELECT sessions FROM pg_stat_database WHERE datname = %s", (database,)).fetchone()
    return int(str(row[0])) if row else 0


# backends flush their statistics at most once a second when they go idle
STATS_FLUSH_SECONDS = 1.2


def measure(
    url: str,
    server_pid: int,
    stats: psycopg.Connection[tuple[object, ...]],
    database: str,
    call: str,
    customers: Path,
    token: str,
    prefix: str,
    seconds: float,
    connections: int,
    *,
    script: Path = LUA,
    extra: tuple[str, ...] = (),
) -> Measured:
    """One measured wrk run with its CPU and session counts (the warm-up is the caller's)."""
    time.sleep(STATS_FLUSH_SECONDS)  # sessions of the warm-up are counted before the window opens
    before = sessions(stats, database)
    load1 = os.getloadavg()[0]
    with CpuWatch(server_pid, stats, database) as cpu:
        result = wrk(url, call, customers, token, prefix, seconds, connections, script=script, extra=extra)
    time.sleep(STATS_FLUSH_SECONDS)
    opened = sessions(stats, database) - before
    return Measured(result, cpu.percent("server"), cpu.percent("database"), opened, cpu.peak_backends, load1)


Runs = dict[tuple[str, str], list[Measured]]
Data = Callable[[str, str, float], Path]
"""The data file of one wrk run, from its call, key prefix and seconds (a file made for the run, or
the same customers file every time)."""


def bench_url(database: str) -> str:
    """The libpq URL of ``database`` on the bench's server, for the statistics connection."""
    head, _, query = SERVER.partition("?")
    return f"{head.rsplit('/', 1)[0]}/{database}" + (f"?{query}" if query else "")


def order(round_no: int, names: Sequence[str] = ("service", "raw")) -> list[str]:
    """The servers of one round: the order alternates, so neither always runs on a warmer machine."""
    return list(names) if round_no % 2 == 0 else list(names)[::-1]


def prime(
    options: argparse.Namespace,
    start: Callable[[], Server],
    database: str,
    token: str,
    data: Data,
    *,
    script: Path = LUA,
    extra: tuple[str, ...] = (),
) -> None:
    """``options.prime`` seconds of each call at the service, unmeasured, then ``VACUUM ANALYZE``.

    Seeding leaves the tables a call writes (purchases, redemptions, entries) empty, and a backend
    keeps the plans it made on them. Without this, whichever server ran first paid for those plans and
    for autovacuum's first passes: the service in every first round, never the raw app. Primed, both
    servers meet the tables with rows and statistics that know them, as in a shop's steady state."""
    seconds = options.prime
    if seconds <= 0:
        return
    server = start()
    try:
        for call in options.calls:
            print(f"bench: {seconds:g} s of {call} to prime the tables", flush=True)
            primer = data(call, "prime", seconds)
            wrk(server.url, call, primer, token, "prime", seconds, options.connections, script=script, extra=extra)
    finally:
        server.stop()
    with psycopg.connect(bench_url(database), autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")


def add_prime(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--prime",
        type=float,
        default=5,
        help="seconds of each call at the service, unmeasured, then VACUUM ANALYZE, before the first round (0: none)",
    )


def primed(options: argparse.Namespace) -> str:
    """What :func:`prime` did, for a report's setup sentence ("" when it did nothing)."""
    seconds = options.prime
    if seconds <= 0:
        return ""
    return f"before the first round, {seconds:g} s of each call at the service, unmeasured, then `VACUUM ANALYZE`"


def ab_rounds(
    options: argparse.Namespace,
    servers: dict[str, Callable[[], Server]],
    database: str,
    token: str,
    data: Data,
    *,
    script: Path,
    extra: tuple[str, ...] = (),
) -> Runs:
    """``options.rounds`` rounds of every call of ``options.calls`` at each server, the order
    alternating; each run has its server to itself (the other is stopped, so its connections take no
    share of PostgreSQL's ``max_connections``), after ``options.warmup`` seconds of unmeasured load."""
    prime(options, servers["service"], database, token, data, script=script, extra=extra)
    runs: Runs = {}
    with psycopg.connect(bench_url(database), autocommit=True) as stats:
        for round_no in range(options.rounds):
            for call in options.calls:
                for name in order(round_no, list(servers)):
                    print(f"bench: round {round_no + 1}, {call}, {name}", flush=True)
                    prefix = f"r{round_no}-{name}"
                    server = servers[name]()
                    try:
                        if options.warmup > 0:
                            warm = data(call, prefix + "-w", options.warmup)
                            wrk(
                                server.url,
                                call,
                                warm,
                                token,
                                prefix + "-w",
                                options.warmup,
                                options.connections,
                                script=script,
                                extra=extra,
                            )
                        measured = measure(
                            server.url,
                            server.process.pid,
                            stats,
                            database,
                            call,
                            data(call, prefix, options.duration),
                            token,
                            prefix,
                            options.duration,
                            options.connections,
                            script=script,
                            extra=extra,
                        )
                    finally:
                        server.stop()
                    runs.setdefault((call, name), []).append(measured)
    return runs


ALTERNATE = "The rounds alternate service and raw; the ratios of runs made back to back are the figures to read."


def ab_report(
    title: str,
    command: str,
    started: dt.datetime,
    load_before: tuple[float, float, float],
    options: argparse.Namespace,
    runs: Runs,
    *,
    about: list[str],
    calls: dict[str, str],
    after: Sequence[str] = (),
    profile: Sequence[str] = (),
    intro: Sequence[str] = (ALTERNATE,),
) -> str:
    """An A/B bench's report: the preamble, ``intro``, the paragraphs of ``about`` (the setup and
    what the raw side does), the calls, the medians' table with its ratios and every run, what was
    found in the database ``after`` the runs, and the ``profile``."""
    from bench.request_path import _table, preamble  # it imports this module

    priming = primed(options)
    lines = [
        *preamble(title, command, started, load_before, os.getloadavg()),
        *intro,
        *([f"The tables were primed: {priming}."] if priming else []),
        "",
        *(line for paragraph in about for line in (paragraph, "")),
        "Calls: " + "; ".join(f"{call} = {calls[call]}" for call in options.calls) + ".",
        "",
        "## Results (medians of the rounds; sessions: the most of any round; errors: all rounds)",
        "",
        *_table(options, runs),
        "",
        *([*after, ""] if after else []),
        *profile,
    ]
    return "\n".join(lines) + "\n"


class Bench:
    """What a benchmark starts from: its start time and load average, a scratch database, a folder
    for the servers' logs, the raw app's pool size, and starters of the service and the raw app."""

    def __init__(self, options: argparse.Namespace, database: str, name: str) -> None:
        self.options = options
        self.started = dt.datetime.now(dt.UTC)
        self.load_before = os.getloadavg()
        self.database_url = scratch_database(database)
        self.work = Path(tempfile.mkdtemp(prefix=f"bench-{name}-"))
        print(f"bench: servers' logs in {self.work}", flush=True)
        self.pool = -(-options.connections // options.workers)
        """Connections per raw app process: the wrk connections shared out over its processes."""

    @property
    def plain(self) -> str:
        """The scratch database's libpq URL (``database_url`` is SQLAlchemy's)."""
        return self.database_url.replace("postgresql+psycopg://", "postgresql://", 1)

    def service(
        self, workers: int | None = None, *, redis_url: str | None = None, settings: dict[str, str] | None = None
    ) -> Server:
        """``loyalty serve`` on the scratch database: ``options.workers`` processes unless ``workers``."""
        count = self.options.workers if workers is None else workers
        return start_service(self.database_url, count, self.work, redis_url, settings)

    def raw(self, vendor_id: int) -> Callable[[], Server]:
        """The raw app's starter; a request naming no vendor (X-Bench-Vendor) is ``vendor_id``'s."""
        return lambda: start_raw(self.database_url, vendor_id, self.options.workers, self.pool, self.work)
