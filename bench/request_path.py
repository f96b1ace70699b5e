"""The till's request path against the same SQL run bare: the request path at raw-SQL speed.

``uv run just bench request-path [--duration 15 --connections 32 --rounds 3 --warmup 3 --workers 2
--customers 1000 --calls lookup,adjust --profile --stale-stats]``

On a fresh database of the local PostgreSQL, ``loyalty serve`` (granian, uvloop, test mode off)
migrates the schema; one vendor registers ``--customers`` customers through the public API (each
gets a wallet and a card). Beside it a bare psycopg app (``bench._raw_app``) runs the same SQL under
granian with the same workers and loop. wrk drives each call at both, a random customer and a new
idempotency key per request, after a warm-up; the order of the two alternates over the rounds.
Recorded per run: throughput, p50, p99, the CPU of the server processes and of the database's
backends, and the sessions PostgreSQL opened during the steady load. ``--profile`` then records one
service worker with py-spy for each call. The in-process cost of auth + rate limiter comes from
``bench.auth``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import functools
import os
import platform
import statistics
import subprocess
from collections.abc import Callable
from pathlib import Path

import psycopg

from bench import _load, _profile, _servers, auth, results_dir
from bench._support import SERVER, scratch_name

DATABASE = scratch_name("loyalty_bench_request_path")
CALLS = {
    "lookup": "`GET /api/v1/customers/lookup?identifier=<card>`",
    "adjust": "`POST /api/v1/customers/{id}/wallet/adjust` (+1, new key)",
}


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench request-path", description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=15, help="seconds of measured load per run")
    parser.add_argument("--connections", type=int, default=32, help="wrk connections")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=float, default=3, help="seconds of unmeasured load before each run")
    parser.add_argument("--workers", type=int, default=2, help="server processes of each server")
    parser.add_argument("--customers", type=int, default=1000)
    parser.add_argument("--calls", default="lookup,adjust", help="comma-separated: lookup, adjust")
    parser.add_argument(
        "--redis-url", help="give the service this REDIS_URL (a limiter shared by its processes); default: none"
    )
    parser.add_argument("--profile", action="store_true", help="py-spy one service worker per call, after the rounds")
    parser.add_argument(
        "--stale-stats",
        action="store_true",
        help="no ANALYZE after seeding and autovacuum off: the planner's view right after a vendor's sign-up",
    )
    _load.add_prime(parser)
    options = parser.parse_args(argv)
    if options.stale_stats:
        options.prime = 0  # the planner's view before any row is written is what that run measures
    options.calls = [c for c in options.calls.split(",") if c]
    unknown = set(options.calls) - set(CALLS)
    if unknown:
        parser.error(f"unknown calls: {', '.join(sorted(unknown))}")
    return options


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _version(argv: list[str]) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except OSError:
        return "?"
    return (done.stdout or done.stderr).strip().splitlines()[0] if (done.stdout or done.stderr) else "?"


def preamble(
    title: str, command: str, started: dt.datetime, load_before: tuple[float, ...], load_after: tuple[float, ...]
) -> list[str]:
    """A report's title, command, machine and load averages: every benchmark's first lines."""
    return [
        f"# {title}",
        "",
        f"Command: `{command}`",
        "",
        f"Run {started:%Y-%m-%d %H:%M} UTC; {os.cpu_count()} cores (nproc), {platform.python_implementation()}"
        f" {platform.python_version()}, {_version(['wrk', '-v']).split(' [')[0]}, PostgreSQL"
        f" {_server_version()} on 127.0.0.1.",
        f"Load average (1, 5, 15 min) before: {', '.join(f'{x:.2f}' for x in load_before)}; after:"
        f" {', '.join(f'{x:.2f}' for x in load_after)}.",
    ]


def _server_version() -> str:
    # asked of the bench's own server: psql on the default port answers for another cluster, or is
    # not installed where the bench carries its PostgreSQL
    try:
        with psycopg.connect(SERVER, connect_timeout=5) as conn:
            row = conn.execute("SHOW server_version").fetchone()
    except psycopg.Error:
        return "?"
    return str(row[0]) if row else "?"


def _max_connections() -> str:
    with psycopg.connect(SERVER) as conn:
        row = conn.execute("SHOW max_connections").fetchone()
    return str(row[0]) if row else "?"


Runs = dict[tuple[str, str], list[_load.Measured]]


def _rounds(
    options: argparse.Namespace, servers: dict[str, Callable[[], _servers.Server]], seeded: _servers.Seeded, work: Path
) -> Runs:
    """Each run has its server to itself: the other one is stopped, so its connections take no
    share of PostgreSQL's ``max_connections`` (shared with whatever else runs on the machine)."""
    customers = work / "customers.txt"
    customers.write_text("".join(f"{cid} {card}\n" for cid, card in seeded.customers))
    head, _, query = SERVER.partition("?")
    url = f"{head.rsplit('/', 1)[0]}/{DATABASE}" + (f"?{query}" if query else "")
    _load.prime(options, servers["service"], DATABASE, seeded.token, lambda call, prefix, seconds: customers)
    runs: Runs = {}
    with psycopg.connect(url, autocommit=True) as stats:
        for round_no in range(options.rounds):
            order = ["service", "raw"] if round_no % 2 == 0 else ["raw", "service"]
            for call in options.calls:
                for name in order:
                    print(f"bench: round {round_no + 1}, {call}, {name}", flush=True)
                    server = servers[name]()
                    prefix = f"r{round_no}-{name}"
                    try:
                        runs.setdefault((call, name), []).append(
                            _run(options, server, stats, call, customers, seeded.token, prefix)
                        )
                    finally:
                        server.stop()
    return runs


def _run(
    options: argparse.Namespace,
    server: _servers.Server,
    stats: psycopg.Connection[tuple[object, ...]],
    call: str,
    customers: Path,
    token: str,
    prefix: str,
) -> _load.Measured:
    if options.warmup > 0:
        _load.wrk(server.url, call, customers, token, prefix + "-w", options.warmup, options.connections)
    return _load.measure(
        server.url,
        server.process.pid,
        stats,
        DATABASE,
        call,
        customers,
        token,
        prefix,
        options.duration,
        options.connections,
    )


def _profiles(
    options: argparse.Namespace, start: Callable[[], _servers.Server], seeded: _servers.Seeded, work: Path
) -> list[str]:
    customers = work / "customers.txt"
    lines = ["## Where the time goes (py-spy, one service worker)", ""]
    for call in options.calls:
        print(f"bench: profiling the service on {call}", flush=True)
        service = start()
        try:
            workers = [pid for pid in _load.process_tree(service.process.pid) if pid != service.process.pid]
            out = results_dir() / f"request-path-{call}.collapsed.txt"
            _load.wrk(service.url, call, customers, seeded.token, f"pw-{call}", options.warmup, options.connections)
            recording = _profile.record(workers[0] if workers else service.process.pid, options.duration, out)
            _load.wrk(service.url, call, customers, seeded.token, f"p-{call}", options.duration, options.connections)
            _profile.finish(recording, options.duration)
        finally:
            service.stop()
        lines += _profile.markdown(f"{call}: {CALLS[call]}", _profile.summarise(out), _profile.shown(out))
    return lines


def _errors(runs: list[_load.Measured]) -> str:
    total: dict[str, int] = {}
    for m in runs:
        for kind, n in m.wrk.errors.items():
            total[kind] = total.get(kind, 0) + n
    return ", ".join(f"{n} {kind}" for kind, n in total.items()) or "0"


def _table(options: argparse.Namespace, runs: Runs) -> list[str]:
    lines = [
        "| call | server | req/s | p50 ms | p99 ms | server CPU % | PostgreSQL CPU % | server CPU ms/req"
        " | PostgreSQL CPU ms/req | new sessions | peak backends | errors |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for call in options.calls:
        for name in ("service", "raw"):
            got = runs[(call, name)]
            # CPU time per request is the figure least moved by what else runs on the machine
            lines.append(
                f"| {call} | {name} | {_median([m.wrk.rate for m in got]):,.0f}"
                f" | {_median([m.wrk.p50_ms for m in got]):.1f} | {_median([m.wrk.p99_ms for m in got]):.1f}"
                f" | {_median([m.server_cpu for m in got]):.0f} | {_median([m.database_cpu for m in got]):.0f}"
                f" | {_median([10 * m.server_cpu / m.wrk.rate for m in got]):.2f}"
                f" | {_median([10 * m.database_cpu / m.wrk.rate for m in got]):.2f}"
                f" | {max(m.new_sessions for m in got)} | {max(m.peak_backends for m in got)} | {_errors(got)} |"
            )
    lines += ["", "Ratios (service / raw, medians of the rounds) against the targets:", ""]
    lines += ["| call | throughput ratio (target >= 0.50) | p99 ratio (target <= 2.0) |", "|---|---|---|"]
    for call in options.calls:
        service, raw = runs[(call, "service")], runs[(call, "raw")]
        rate = _median([m.wrk.rate for m in service]) / _median([m.wrk.rate for m in raw])
        p99 = _median([m.wrk.p99_ms for m in service]) / _median([m.wrk.p99_ms for m in raw])
        lines.append(f"| {call} | {rate:.2f} | {p99:.1f} |")
    lines += ["", "Every run, in the order run (load1: the 1-minute load average as the run began):", ""]
    lines += [
        "| round | call | server | req/s | p50 ms | p99 ms | server CPU % | PG CPU % | sessions | backends | load1 |"
    ]
    lines += ["|---|---|---|---|---|---|---|---|---|---|---|"]
    for round_no in range(options.rounds):
        order = ["service", "raw"] if round_no % 2 == 0 else ["raw", "service"]
        for call in options.calls:
            for name in order:
                m = runs[(call, name)][round_no]
                lines.append(
                    f"| {round_no + 1} | {call} | {name} | {m.wrk.rate:,.0f} | {m.wrk.p50_ms:.1f} | {m.wrk.p99_ms:.1f}"
                    f" | {m.server_cpu:.0f} | {m.database_cpu:.0f} | {m.new_sessions} | {m.peak_backends}"
                    f" | {m.load1:.2f} |"
                )
    return lines


def run(argv: list[str] | None = None) -> str:
    options = _options(argv or [])
    # its folder is kept after the run: the servers' logs explain any error wrk counted
    bench = _load.Bench(options, DATABASE, "request-path")
    started, load_before, database_url, work = bench.started, bench.load_before, bench.database_url, bench.work
    service = functools.partial(bench.service, redis_url=options.redis_url)

    first = service()
    try:
        print(f"bench: registering {options.customers} customers through the API", flush=True)
        seeded = _servers.seed(first, options.customers)
    finally:
        first.stop()
    _servers.settle_statistics(database_url, analyse=not options.stale_stats)

    raw = bench.raw(seeded.vendor_id)

    runs = _rounds(options, {"service": service, "raw": raw}, seeded, work)
    profile = _profiles(options, service, seeded, work) if options.profile else []
    print("bench: measuring auth + limiter in process", flush=True)
    in_process = asyncio.run(auth._measure(None))
    added = auth.added(in_process)
    load_after = os.getloadavg()
    command = " ".join(["uv run just bench request-path", *(argv or [])])
    priming = _load.primed(options)
    lines = [
        *preamble("The request path against the same SQL run bare", command, started, load_before, load_after),
        "wrk, both servers and PostgreSQL share the machine's cores, so absolute figures move with",
        "whatever else runs (see the load averages); the ratios of runs made back to back are the",
        "figures to read.",
        "",
        f"Setup: `loyalty serve --workers {options.workers}` (granian, uvloop, test mode off, log level WARNING,"
        " in-process job worker, rate limiter "
        + ("in Redis" if options.redis_url else "in process memory")
        + "; plan limit 10,000,000/min) and the raw app"
        f" (`bench/_raw_app.py`: granian {options.workers} workers, uvloop, psycopg `AsyncConnectionPool` of"
        f" {bench.pool} connections per process, no auth). {options.customers:,} customers of one vendor registered"
        " through `POST /api/v1/customers`; then "
        + ("no ANALYZE and autovacuum off (`--stale-stats`)" if options.stale_stats else "`VACUUM ANALYZE`")
        + (f"; {priming}." if priming else ".")
        + f" wrk `-t2 -c{options.connections} -d{options.duration:g}s` after a {options.warmup:g} s warm-up,"
        f" a random customer and a new idempotency key per request; {options.rounds} round(s), the order"
        " of service and raw alternating. CPU is percent of one core over the window, read from /proc: every"
        " process of the server, and every backend of the bench database (pg_stat_activity). New sessions:"
        " the change of `pg_stat_database.sessions` over the measured window; peak backends: the most"
        f" backends of the bench database seen at once (PostgreSQL's `max_connections` is {_max_connections()},"
        " shared with everything else on the server). Each run starts its server afresh with the other one"
        " stopped, so the idle pool of one takes no connection from the other.",
        "",
        "Calls: " + "; ".join(f"{call} = {CALLS[call]}" for call in options.calls) + ".",
        "",
        "## Results (medians of the rounds; sessions: the most of any round; errors: all rounds)",
        "",
        *_table(options, runs),
        "",
        "## Auth + rate limiter, in process",
        "",
        f"From `bench/auth.py` ({auth.REQUESTS} sequential requests per route via ASGI, memory limiter;"
        " target: at most 0.3 ms added per request, median):",
        "",
        "| route | median ms | CPU ms per request |",
        "|---|---|---|",
        *(f"| {route} | {median:.3f} | {cpu:.3f} |" for route, (median, _, cpu) in in_process.items()),
        *(f"| **added: {route}** | **{median:.3f}** | **{cpu:.3f}** |" for route, median, cpu in added),
        "",
        *profile,
    ]
    return "\n".join(lines) + "\n"
