"""What each till call costs PostgreSQL, the service's against the raw app's same work.

``LOYALTY_BENCH_OWN_POSTGRES=1 uv run just bench pg-cost [--duration 8 --warmup 2 --connections 32
--workers 1 --customers 1000 --calls transaction,adjust,redeem,verify,lookup --max-transactions 0]``

On the bench's own cluster (``bench._cluster``: ``pg_stat_statements`` preloaded) ``loyalty serve``
migrates a fresh database; one vendor (campaigns on, a transaction meter of ``--max-transactions``,
0 for none) registers ``--customers`` customers, gives each points, makes the earning terms of
``bench.earning`` and the reward of ``bench.redemptions``. Each call then runs at the service and
at the raw app (``bench._raw_app``) with the same wrk scripts as those benchmarks; around each
measured run: ``CHECKPOINT`` and ``next_multixact_id``, the WAL position, commits and block touches
before and after, ``pg_stat_statements`` reset before and read after, and the active backends' wait
events sampled every 20 ms. Every figure is per request, so it does not depend on the machine's
load; req/s is printed for reference only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psycopg

from bench import _load, _pgstats, _servers, earning, redemptions
from bench._support import scratch_database, scratch_name
from bench.request_path import preamble

DATABASE = scratch_name("loyalty_bench_pg_cost")
SCRIPTS = {
    "transaction": (earning.LUA, False),
    "adjust": (_load.LUA, False),
    "lookup": (_load.LUA, False),
    "redeem": (redemptions.LUA, True),
    "verify": (redemptions.LUA, True),
}
CALLS = {
    "transaction": earning.CALLS["transaction"],
    "adjust": "`POST /api/v1/customers/{id}/wallet/adjust` (+1, new key)",
    "redeem": redemptions.CALLS["redeem"],
    "verify": redemptions.CALLS["verify"],
    "lookup": "`GET /api/v1/customers/lookup?identifier=<card>`",
}


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench pg-cost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=8, help="seconds of measured load per run")
    parser.add_argument("--warmup", type=float, default=2, help="seconds of unmeasured load before each run")
    parser.add_argument("--connections", type=int, default=32, help="wrk connections")
    parser.add_argument("--workers", type=int, default=1, help="server processes of each server")
    parser.add_argument("--customers", type=int, default=1000)
    parser.add_argument("--calls", default="transaction,adjust,redeem,verify,lookup")
    parser.add_argument("--servers", default="service,raw")
    parser.add_argument("--max-transactions", type=int, default=0, help="the plan's monthly transactions (0: none)")
    parser.add_argument("--top", type=int, default=8, help="statements listed per run")
    parser.add_argument(
        "--prime",
        type=float,
        default=6,
        help="seconds of purchases and redemptions at the service before the runs, then VACUUM ANALYZE",
    )
    options = parser.parse_args(argv)
    options.calls = [c for c in options.calls.split(",") if c]
    options.servers = [s for s in options.servers.split(",") if s]
    unknown = set(options.calls) - set(CALLS)
    if unknown or not set(options.servers) <= {"service", "raw"}:
        parser.error(f"unknown calls or servers: {', '.join(sorted(unknown)) or options.servers}")
    options.codes_rate = 8000
    return options


@dataclass(frozen=True)
class Run:
    call: str
    server: str
    wrk: _load.WrkResult
    database_cpu: float
    cost: _pgstats.Cost
    rss_mb: float
    """The largest peak resident set (VmHWM) of the server's processes, read after the load."""


def _peak_rss_mb(pid: int) -> float:
    peaks = [0.0]
    for each in _load.process_tree(pid):
        try:
            status = Path(f"/proc/{each}/status").read_text()
        except FileNotFoundError:
            continue
        found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
        if found:
            peaks.append(int(found[1]) / 1024)
    return max(peaks)


def _measure(
    options: argparse.Namespace, server: _servers.Server, call: str, load: redemptions.Load, token: str, url: str
) -> tuple[_load.WrkResult, float, _pgstats.Cost, float]:
    script, extra = SCRIPTS[call]
    args = load.extra if extra else ()
    prefix = f"{call}-{server.name}"
    if options.warmup > 0:
        warm = load.data(call, prefix + "-w", options.warmup) if extra else load.customers
        _load.wrk(
            server.url, call, warm, token, prefix + "-w", options.warmup, options.connections, script=script, extra=args
        )
    data = load.data(call, prefix, options.duration) if extra else load.customers
    time.sleep(_load.STATS_FLUSH_SECONDS)
    with (
        psycopg.connect(url, autocommit=True) as conn,
        psycopg.connect(url, autocommit=True) as sampler,
        psycopg.connect(url, autocommit=True) as cpu_conn,
        _pgstats.Watch(conn, sampler) as watch,
    ):
        with _load.CpuWatch(server.process.pid, cpu_conn, DATABASE) as cpu:
            result = _load.wrk(
                server.url,
                call,
                data,
                token,
                prefix,
                options.duration,
                options.connections,
                script=script,
                extra=args,
            )
        time.sleep(_load.STATS_FLUSH_SECONDS)
    return result, cpu.percent("database"), watch.cost, _peak_rss_mb(server.process.pid)


def _prime(options: argparse.Namespace, service: _servers.Server, token: str, customers: Path, reward: int) -> None:
    """Rows in the tables the calls read and write, then fresh statistics: a server's plans are
    made as a live database's would be (prepared statements and foreign keys' checks keep the plan
    they were first given, and on tables still empty that plan is a sequential scan)."""
    if options.prime <= 0:
        return
    print(f"bench: {options.prime:g} s of purchases and of redemptions to prime the tables", flush=True)
    _load.wrk(service.url, "transaction", customers, token, "prime", options.prime, 8, script=earning.LUA)
    extra = (str(reward), str(_load.THREADS))
    _load.wrk(service.url, "redeem", customers, token, "prime", options.prime, 8, script=redemptions.LUA, extra=extra)


def run(argv: list[str] | None = None) -> str:
    options = _options(argv or [])
    started = dt.datetime.now(dt.UTC)
    load_before = os.getloadavg()
    database_url = scratch_database(DATABASE)
    plain = database_url.replace("postgresql+psycopg://", "postgresql://", 1)
    _pgstats.ensure_extension(plain)
    work = Path(tempfile.mkdtemp(prefix="bench-pg-cost-"))
    print(f"bench: servers' logs in {work}", flush=True)
    pool = -(-options.connections // options.workers)

    def service() -> _servers.Server:
        return _servers.start_service(database_url, options.workers, work)

    plan = {"features": {"campaigns": True}, "max_transactions": options.max_transactions}
    first = service()
    try:
        print(f"bench: registering {options.customers} customers, their points, the terms and the reward", flush=True)
        seeded = _servers.seed(first, options.customers, plan)
        earning._terms(first, seeded.vendor_id)
        reward = redemptions._give_points_and_reward(first, seeded)
        customers = work / "customers.txt"
        customers.write_text("".join(f"{cid} {card}\n" for cid, card in seeded.customers))
        _prime(options, first, seeded.token, customers, reward)
    finally:
        first.stop()
    _servers.settle_statistics(database_url, analyse=True)

    def raw() -> _servers.Server:
        return _servers.start_raw(database_url, seeded.vendor_id, options.workers, pool, work)

    starts: dict[str, Callable[[], _servers.Server]] = {"service": service, "raw": raw}
    runs: list[Run] = []
    with psycopg.connect(plain, autocommit=True) as conn:
        load = redemptions.Load(options, customers, redemptions.Codes(conn), reward, work)
        for call in options.calls:
            for name in options.servers:
                print(f"bench: {call}, {name}", flush=True)
                server = starts[name]()
                try:
                    runs.append(Run(call, name, *_measure(options, server, call, load, seeded.token, plain)))
                finally:
                    server.stop()
    command = " ".join(["LOYALTY_BENCH_OWN_POSTGRES=1 uv run just bench pg-cost", *(argv or [])])
    lines = [
        *preamble("What each till call costs PostgreSQL", command, started, load_before, os.getloadavg()),
        "",
        "The machine was busy (other sessions' test suites share its 2 cores): req/s moves with that load;"
        " the per-request figures below do not (statements, blocks, WAL, MultiXacts are counts).",
        "",
        f"Setup: the bench's own PostgreSQL 15 cluster (`bench/_cluster.py`, pg_stat_statements preloaded);"
        f" `loyalty serve --workers {options.workers}` and the raw app ({options.workers} worker(s), pool of"
        f" {pool}); {options.customers:,} customers of one vendor; plan meter "
        + (f"{options.max_transactions:,}/month" if options.max_transactions else "off")
        + f"; {options.prime:g} s each of purchases and redemptions at the service to prime the tables, then"
        " `VACUUM ANALYZE`;"
        f" wrk `-t{_load.THREADS} -c{options.connections} -d{options.duration:g}s` after {options.warmup:g} s"
        " of warm-up; each server alone on the machine during its run.",
        "",
        "Calls: " + "; ".join(f"{c} = {CALLS[c]}" for c in options.calls) + ".",
        "",
        *report(runs, options.top),
    ]
    return "\n".join(lines) + "\n"


def _per(n: float, requests: int) -> float:
    return n / max(requests, 1)


def _waits(cost: _pgstats.Cost, top: int = 4) -> str:
    total = sum(cost.waits.values())
    if not total:
        return "-"
    return ", ".join(f"{name} {100 * n / total:.0f}%" for name, n in cost.waits.most_common(top))


def _query(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()[:110].replace("|", "\\|")


def report(runs: list[Run], top: int) -> list[str]:
    lines = [
        "## Per request",
        "",
        "| call | server | req/s | errors | PG CPU ms/req | statements/req | exec ms/req | shared blocks/req"
        " | dirtied/req | WAL bytes/req | FPI/req | MultiXacts/100 req | commits/req | heap blocks/req"
        " | index blocks/req | seq scans/req | rows seq-read/req | peak RSS MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        n, c = r.wrk.requests, r.cost
        sent = [s for s in c.statements if s.toplevel]
        calls = sum(s.calls for s in sent)
        lines.append(
            f"| {r.call} | {r.server} | {r.wrk.rate:,.0f} | {sum(r.wrk.errors.values())}"
            f" | {10 * r.database_cpu / max(r.wrk.rate, 1e-9):.2f} | {_per(calls, n):.1f}"
            f" | {_per(sum(s.total_ms for s in sent), n):.3f} | {_per(sum(s.blocks for s in sent), n):.1f}"
            f" | {_per(sum(s.dirtied for s in sent), n):.2f} | {_per(c.wal_bytes, n):,.0f}"
            f" | {_per(sum(s.fpi for s in sent), n):.2f} | {100 * _per(c.multixacts, n):.1f}"
            f" | {_per(c.commits, n):.2f} | {_per(c.heap_blocks, n):.1f} | {_per(c.index_blocks, n):.1f}"
            f" | {_per(c.seq_scans, n):.2f} | {_per(c.seq_rows, n):,.0f} | {r.rss_mb:.0f} |"
        )
    lines += ["", "## Wait events (active backends, sampled every 20 ms; CPU = no wait event)", ""]
    lines += ["| call | server | samples | backends active per sample | top wait events |", "|---|---|---|---|---|"]
    for r in runs:
        active = sum(r.cost.waits.values())
        lines.append(
            f"| {r.call} | {r.server} | {r.cost.samples} | {_per(active, r.cost.samples):.1f} | {_waits(r.cost)} |"
        )
    lines += ["", "## Statements (pg_stat_statements, the most total time first)", ""]
    for r in runs:
        n = r.wrk.requests
        lines += [f"### {r.call}, {r.server}", ""]
        lines += ["| calls/req | mean ms | blocks/call | WAL B/call | statement |", "|---|---|---|---|---|"]
        # a nested statement (a foreign key's check: "SELECT 1 FROM ONLY ...") is in its caller's figures too
        for s in sorted(r.cost.statements, key=lambda s: -s.total_ms)[:top]:
            lines.append(
                f"| {_per(s.calls, n):.2f} | {s.total_ms / max(s.calls, 1):.3f} | {s.blocks / max(s.calls, 1):.1f}"
                f" | {s.wal_bytes / max(s.calls, 1):,.0f} | `{_query(s.query)}` |"
            )
        lines.append("")
    return lines
