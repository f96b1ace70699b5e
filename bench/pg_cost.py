"""What each till call costs PostgreSQL, the service's against the raw app's same work.

``LOYALTY_BENCH_OWN_POSTGRES=1 uv run just bench pg-cost [--duration 8 --warmup 2 --connections 32
--workers 1 --customers 1000 --calls transaction,adjust,redeem,verify,lookup --max-transactions 0
--vendors 1 --rounds 1 --branch --redis URL]``

The outside A/B harness's configuration (2 server processes, no Redis, one shop's till, 3 alternating
15 s rounds): ``--workers 2 --duration 15 --rounds 3 --branch --calls transaction,redeem,adjust,lookup``.

On the bench's own cluster (``bench._cluster``: ``pg_stat_statements`` preloaded) ``loyalty serve``
migrates a fresh database; one vendor (campaigns on, a transaction meter of ``--max-transactions``,
0 for none) registers ``--customers`` customers, gives each points, makes the earning terms of
``bench.earning`` and the reward of ``bench.redemptions``. Each call then runs at the service and
at the raw app (``bench._raw_app``) with the same wrk scripts as those benchmarks; around each
measured run: ``CHECKPOINT`` and ``next_multixact_id`` (and after it, the rows of the database that
carry a MultiXact made meanwhile, by table: what concurrent writers share-locked), the WAL position,
commits and block touches before and after, ``pg_stat_statements`` reset before and read after, and
the active backends' wait events sampled every 20 ms. Every figure is per request, so it does not
depend on the machine's load; req/s is printed for reference only.

``--vendors N`` (N > 1) adds N more vendors on a plan like the first's, the same number of customers
dealt out among them, each with the same terms: the purchase then runs at the service for the one
vendor ("service") and spread over the N ("spread": each request with its customer's vendor's token),
``--rounds`` times with the order alternating, so one vendor's tills and many vendors' are compared
back to back on the same database.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

from bench import _load, _pgstats, _servers, _variants, earning, redemptions
from bench._support import scratch_name
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
    parser.add_argument("--calls", default=None, help="default: every call, or the purchase alone with --vendors")
    parser.add_argument("--servers", default=None, help="service, spread, raw (default: service and raw, or spread)")
    parser.add_argument("--vendors", type=int, default=1, help="with N > 1, also the purchase spread over N vendors")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each server, the order alternating")
    parser.add_argument(
        "--without-index",
        action="append",
        default=[],
        metavar="NAME",
        help="drop this index once migrated (what one index costs the writes: run with and without)",
    )
    parser.add_argument("--max-transactions", type=int, default=0, help="the plan's monthly transactions (0: none)")
    parser.add_argument(
        "--branch",
        action="store_true",
        help="the vendor's client has a default branch, so every purchase and redemption names it (a shop's till)",
    )
    parser.add_argument(
        "--redis",
        default=None,
        metavar="URL",
        help="the service's REDIS_URL (its job queue and rate limits on Redis); default none: both on PostgreSQL",
    )
    parser.add_argument("--top", type=int, default=8, help="statements listed per run")
    parser.add_argument(
        "--prime",
        type=float,
        default=6,
        help="seconds of purchases and redemptions at the service before the runs, then VACUUM ANALYZE",
    )
    options = parser.parse_args(argv)
    spread = options.vendors > 1
    calls = options.calls or ("transaction" if spread else ",".join(CALLS))
    options.calls = [c for c in calls.split(",") if c]
    options.servers = [s for s in (options.servers or ("service,spread" if spread else "service,raw")).split(",") if s]
    unknown = set(options.calls) - set(CALLS)
    if unknown or not set(options.servers) <= {"service", "raw", "spread"}:
        parser.error(f"unknown calls or servers: {', '.join(sorted(unknown)) or options.servers}")
    if ("spread" in options.servers) != spread or (spread and options.calls != ["transaction"]):
        parser.error("the spread server goes with --vendors N (N > 1), and then with --calls transaction alone")
    options.codes_rate = 8000
    return options


@dataclass(frozen=True)
class Run:
    call: str
    server: str
    wrk: _load.WrkResult
    database_cpu: float
    cost: _pgstats.Cost
    server_cpu: float
    """Percent of one core, the server's processes together."""
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
    options: argparse.Namespace,
    server: _servers.Server,
    call: str,
    load: redemptions.Load,
    token: str,
    url: str,
    customers: Path,
    prefix: str,
) -> tuple[_load.WrkResult, float, _pgstats.Cost, float, float]:
    """``customers``: the data of the calls that take customers (the spread server's are several vendors')."""
    script, extra = SCRIPTS[call]
    args = load.extra if extra else ()
    if options.warmup > 0:
        warm = load.data(call, prefix + "-w", options.warmup) if extra else customers
        _load.wrk(
            server.url, call, warm, token, prefix + "-w", options.warmup, options.connections, script=script, extra=args
        )
    data = load.data(call, prefix, options.duration) if extra else customers
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
    return result, cpu.percent("database"), watch.cost, cpu.percent("server"), _peak_rss_mb(server.process.pid)


def _prime(
    options: argparse.Namespace, service: _servers.Server, token: str, customers: Path, reward: int, spread: Path | None
) -> None:
    """Rows in the tables the calls read and write, then fresh statistics: a server's plans are
    made as a live database's would be (prepared statements and foreign keys' checks keep the plan
    they were first given, and on tables still empty that plan is a sequential scan)."""
    if options.prime <= 0:
        return
    print(f"bench: {options.prime:g} s of purchases and of redemptions to prime the tables", flush=True)
    _load.wrk(service.url, "transaction", customers, token, "prime", options.prime, 8, script=earning.LUA)
    extra = (str(reward), str(_load.THREADS))
    _load.wrk(service.url, "redeem", customers, token, "prime", options.prime, 8, script=redemptions.LUA, extra=extra)
    if spread is not None:
        _load.wrk(service.url, "transaction", spread, token, "prime-spread", options.prime, 8, script=earning.LUA)


def run(argv: list[str] | None = None) -> str:
    options = _options(argv or [])
    bench = _variants.set_up(options, DATABASE, "pg-cost")
    database_url, plain, work = bench.database_url, bench.plain, bench.work
    service = functools.partial(bench.service, redis_url=options.redis)

    plan = {"features": {"campaigns": True}, "max_transactions": options.max_transactions}
    first = service()
    with psycopg.connect(plain, autocommit=True) as conn:
        for index in options.without_index:
            conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(index)))
    try:
        print(f"bench: registering {options.customers} customers, their points, the terms and the reward", flush=True)
        seeded = _servers.seed(first, options.customers, plan, branch=options.branch)
        earning._terms(first, seeded.vendor_id)
        reward = redemptions._give_points_and_reward(first, seeded)
        customers = _servers.write_customers([seeded], work / "customers.txt")
        spread = None
        if options.vendors > 1:
            print(f"bench: {options.vendors} vendors more, {options.customers} customers among them", flush=True)
            shops = _servers.seed_vendors(first, options.vendors, options.customers, plan)
            for shop in shops:
                earning._terms(first, shop.vendor_id)
            spread = _servers.write_customers(shops, work / "spread.txt")
        _prime(options, first, seeded.token, customers, reward, spread)
    finally:
        first.stop()
    _servers.settle_statistics(database_url, analyse=True)

    raw = bench.raw(seeded.vendor_id)
    starts: dict[str, Callable[[], _servers.Server]] = {"service": service, "raw": raw, "spread": service}
    labels = {"spread": f"service, {options.vendors} vendors"}
    runs: list[Run] = []
    with psycopg.connect(plain, autocommit=True) as conn:
        load = redemptions.Load(options, customers, redemptions.Codes(conn), reward, work)
        for round_no in range(options.rounds):
            for call in options.calls:
                for name in _load.order(round_no, options.servers):
                    print(f"bench: round {round_no + 1}, {call}, {name}", flush=True)
                    data = spread if name == "spread" and spread is not None else customers
                    server = starts[name]()
                    try:
                        measured = _measure(
                            options, server, call, load, seeded.token, plain, data, f"{call}-{name}-r{round_no}"
                        )
                    finally:
                        server.stop()
                    runs.append(Run(call, labels.get(name, name), *measured))
    command = " ".join(["LOYALTY_BENCH_OWN_POSTGRES=1 uv run just bench pg-cost", *(argv or [])])
    lines = [
        *preamble("What each till call costs PostgreSQL", command, bench.started, bench.load_before, os.getloadavg()),
        "",
        "wrk, the server and PostgreSQL share the machine's cores, so req/s moves with whatever else runs"
        " (see the load averages); the per-request counts below do not (statements, blocks, WAL, MultiXacts).",
        "",
        f"Setup: the bench's own PostgreSQL 15 cluster (`bench/_cluster.py`, pg_stat_statements preloaded);"
        f" `loyalty serve --workers {options.workers}` and the raw app ({options.workers} worker(s), pool of"
        f" {bench.pool}); {options.customers:,} customers of one vendor"
        + (f" (and as many dealt out among {options.vendors} more, on a plan alike)" if options.vendors > 1 else "")
        + "; plan meter "
        + (f"{options.max_transactions:,}/month" if options.max_transactions else "off")
        + "".join(f"; index `{index}` dropped" for index in options.without_index)
        + (
            "; the client's default branch is a shop of the vendor (every purchase and redemption names it)"
            if options.branch
            else "; the client has no default branch"
        )
        + (
            f"; the service's job queue, worker and limits on Redis ({options.redis})"
            if options.redis
            else "; no Redis: the service's job queue and its in-process worker on PostgreSQL"
        )
        + f"; {options.prime:g} s each of purchases and redemptions at the service to prime the tables, then"
        " `VACUUM ANALYZE`;"
        f" wrk `-t{_load.THREADS} -c{options.connections} -d{options.duration:g}s` after {options.warmup:g} s"
        " of warm-up; each server alone on the machine during its run"
        + (f"; {options.rounds} rounds, the servers' order alternating." if options.rounds > 1 else "."),
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


def _wal_parts(runs: list[Run], top: int) -> list[str]:
    """Each run's WAL by relation and record kind, per request, the largest first."""
    if not any(r.cost.wal_parts for r in runs):
        return []
    lines = ["", "## WAL by relation and record (pg_waldump over the run; bytes per request, FPIs included)", ""]
    for r in runs:
        n, parts, images = r.wrk.requests, r.cost.wal_parts, r.cost.wal_images
        total, shown = sum(parts.values()), parts.most_common(3 * top)
        lines += [
            f"### {r.call}, {r.server}: {_per(total, n):,.0f} bytes/req, full-page images"
            f" {_per(sum(images.values()), n):,.0f}",
            "",
        ]
        lines += ["| relation: record | bytes/req | of which full-page images |", "|---|---|---|"]
        lines += [f"| {part} | {_per(size, n):,.0f} | {_per(images[part], n):,.0f} |" for part, size in shown]
        rest = total - sum(size for _, size in shown)
        rest_images = sum(images.values()) - sum(images[part] for part, _ in shown)
        lines += [f"| the rest | {_per(rest, n):,.0f} | {_per(rest_images, n):,.0f} |", ""]
    return lines


def report(runs: list[Run], top: int) -> list[str]:
    lines = [
        "## Per request",
        "",
        "| call | server | req/s | p99 ms | errors | server CPU ms/req | PG CPU ms/req | statements/req"
        " | exec ms/req | shared blocks/req"
        " | dirtied/req | WAL bytes/req | FPI/req | MultiXacts/100 req | commits/req | heap blocks/req"
        " | index blocks/req | seq scans/req | rows seq-read/req | peak RSS MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        n, c = r.wrk.requests, r.cost
        sent = [s for s in c.statements if s.toplevel]
        calls = sum(s.calls for s in sent)
        lines.append(
            f"| {r.call} | {r.server} | {r.wrk.rate:,.0f} | {r.wrk.p99_ms:.1f} | {sum(r.wrk.errors.values())}"
            f" | {10 * r.server_cpu / max(r.wrk.rate, 1e-9):.2f}"
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
    lines += _wal_parts(runs, top)
    lines += [
        "",
        "## Rows under a MultiXact (row versions whose xmax is a MultiXact made during the run: the rows"
        " concurrent transactions shared a lock on, by table and member lock modes; a lower bound)",
        "",
    ]
    lines += ["| call | server | rows |", "|---|---|---|"]
    for r in runs:
        rows = ", ".join(f"{name} {n:,}" for name, n in r.cost.multixact_rows.most_common(top))
        lines.append(f"| {r.call} | {r.server} | {rows or '-'} |")
    lines += ["", "## Shared blocks by table (its indexes with it; per request, the most first)", ""]
    lines += ["| call | server | tables |", "|---|---|---|"]
    for r in runs:
        most = r.cost.table_blocks.most_common(top)
        tables = ", ".join(f"{name} {_per(n, r.wrk.requests):.1f}" for name, n in most)
        lines.append(f"| {r.call} | {r.server} | {tables or '-'} |")
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
