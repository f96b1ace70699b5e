"""A till's day over many shops against the same SQL run bare: the service under a realistic load.

``uv run just bench mix [--vendors 100 --customers 100000 --workers 1,2 --duration 15 --rounds 2
--connections 32 --warmup 3 --statements 0]``; ``--statements N`` (with ``LOYALTY_BENCH_OWN_POSTGRES=1``)
adds each run's N costliest statements to the report.

On a fresh database ``loyalty serve`` migrates the schema; ``--vendors`` shops are made through the
admin API (a plan without a rate ceiling, an API client and token, an earn rule of a point per euro
and one reward each), then ``--customers`` customers spread over them are written in bulk SQL with
what registration gives (a loyalty card, a wallet) and points enough to redeem all day (one
adjustment entry and its lot each, so the ledger holds). wrk (``bench/wrk/mix.lua``) sends the till
mix: 70% purchases of one to three lines, 15% lookups by card, 10% reward lists, 5% redemptions,
each redemption's code then verified. The service and the raw app (``bench._raw_app``: the same
statements on a psycopg pool, no auth) alternate over the rounds, for each server process count.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path

import httpx
import psycopg

from bench import _load, _pgstats, _servers
from bench._support import SERVER, scratch_database, scratch_name
from bench.request_path import preamble

DATABASE = scratch_name("loyalty_bench_mix")
LUA = Path(__file__).parent / "wrk" / "mix.lua"
POINTS = 1_000_000
TITLE = "A till's mix over many shops against the same SQL run bare"
ADMIN = _servers.ADMIN

Runs = dict[tuple[int, str], list[_load.Measured]]
Statements = list[str]
"""Each run's costliest statements, as report lines (``--statements``)."""

COSTLIEST = """
SELECT calls, total_exec_time, shared_blks_hit + shared_blks_read, regexp_replace(query, '\\s+', ' ', 'g')
  FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
 WHERE d.datname = %s AND s.toplevel
 ORDER BY total_exec_time DESC LIMIT %s
"""


def _costliest(stats: psycopg.Connection[tuple[object, ...]], top: int, heading: str) -> Statements:
    """The run's ``top`` statements by execution time (then the counters are reset for the next run)."""
    if top <= 0:
        return []
    rows = stats.execute(COSTLIEST, (DATABASE, top)).fetchall()
    stats.execute("SELECT pg_stat_statements_reset()")
    lines = [f"#### {heading}", "", "| calls | ms per call | shared blocks per call | statement |", "|---|---|---|---|"]
    for calls, total, blocks, query in rows:
        n = max(1, int(str(calls)))
        text = str(query)[:140].replace("|", "\\|")
        lines.append(f"| {n:,} | {float(str(total)) / n:.3f} | {int(str(blocks)) / n:,.0f} | `{text}` |")
    return [*lines, ""]


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench mix", description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=15, help="seconds of measured load per run")
    parser.add_argument("--connections", type=int, default=32, help="wrk connections")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--warmup", type=float, default=3, help="seconds of unmeasured load before each run")
    parser.add_argument("--workers", default="1,2", help="comma-separated server process counts to measure")
    parser.add_argument("--vendors", type=int, default=100)
    parser.add_argument("--customers", type=int, default=100_000, help="customers over all vendors")
    _load.add_prime(parser)
    parser.add_argument(
        "--statements",
        type=int,
        default=0,
        help="each run's N costliest statements from pg_stat_statements (LOYALTY_BENCH_OWN_POSTGRES=1)",
    )
    options = parser.parse_args(argv)
    options.worker_counts = [int(n) for n in options.workers.split(",")]
    return options


async def _terms(url: str, shops: list[_servers.Seeded]) -> list[tuple[int, str, int]]:
    """(vendor id, token, reward id) of each shop, once its earn rule and reward are made."""
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        gate = asyncio.Semaphore(8)

        async def terms(shop: _servers.Seeded) -> tuple[int, str, int]:
            async with gate:
                rule = {"name": "Point per euro", "points_per_unit": 1, "unit_amount": 100}
                await _servers.post(client, f"/admin/v1/vendors/{shop.vendor_id}/earn-rules", rule, ADMIN)
                body = {"type": "free_product", "name": "Coffee", "point_cost": 10}
                reward = await _servers.post(client, f"/admin/v1/vendors/{shop.vendor_id}/rewards", body, ADMIN)
                return shop.vendor_id, shop.token, int(str(reward["id"]))

        return sorted(await asyncio.gather(*(terms(shop) for shop in shops)))


# what registration and an adjustment write, in bulk: customer, card, wallet, entry, lot
_CUSTOMERS = """
WITH c AS (
    INSERT INTO customers (vendor_id, email, locale, status, marketing_consent, created_at, updated_at)
    SELECT v.id, 'c' || n || '.' || v.id || '@mix.example', 'nl', 'active', false, now(), now()
    FROM unnest(%(vendors)s::bigint[]) AS v(id), generate_series(1, %(each)s) AS n
    RETURNING id, vendor_id
), card AS (
    INSERT INTO customer_identifiers (vendor_id, customer_id, type, value, active, assigned_at, created_at, updated_at)
    SELECT vendor_id, id, 'loyalty_card', 'MIX' || lpad(id::text, 12, '0'), true, now(), now(), now() FROM c
), w AS (
    INSERT INTO wallets (vendor_id, customer_id, balance, created_at, updated_at)
    SELECT vendor_id, id, %(points)s, now(), now() FROM c
    RETURNING id, vendor_id
), e AS (
    INSERT INTO ledger_entries (vendor_id, wallet_id, type, amount, running_balance, reason, causer_type,
                                created_at, updated_at)
    SELECT vendor_id, id, 'adjust', %(points)s, %(points)s, 'bench', 'system', now(), now() FROM w
    RETURNING id, vendor_id, wallet_id
)
INSERT INTO point_lots (vendor_id, wallet_id, entry_id, points, remaining, created_at, updated_at)
SELECT vendor_id, wallet_id, id, %(points)s, %(points)s, now(), now() FROM e
"""


def _plain(database_url: str) -> str:
    return database_url.replace("postgresql+psycopg://", "postgresql://", 1)


def _seed_customers(database_url: str, vendors: list[int], each: int, out: Path) -> None:
    with psycopg.connect(_plain(database_url)) as conn:
        conn.execute(_CUSTOMERS, {"vendors": vendors, "each": each, "points": POINTS})
        rows = conn.execute(
            "SELECT i.vendor_id, i.customer_id, i.value FROM customer_identifiers i"
            " WHERE i.vendor_id = ANY (%s) ORDER BY i.customer_id",
            (vendors,),
        ).fetchall()
    out.write_text("".join(f"{v} {c} {card}\n" for v, c, card in rows))


def _rounds(
    options: argparse.Namespace,
    servers: dict[str, Callable[[int], _servers.Server]],
    files: Path,
) -> tuple[Runs, Statements]:
    """Each run's measures, and (``--statements``) each run's costliest statements."""
    head, _, query = SERVER.partition("?")
    url = f"{head.rsplit('/', 1)[0]}/{DATABASE}" + (f"?{query}" if query else "")
    runs: Runs = {}
    statements: Statements = []
    customers, shops = files / "customers.txt", files / "shops.txt"
    # the mix is one call, "mix"; wrk's token argument is the shops' file
    primer = argparse.Namespace(prime=options.prime, calls=["mix"], connections=options.connections)
    _load.prime(
        primer,
        lambda: servers["service"](max(options.worker_counts)),
        DATABASE,
        str(shops),
        lambda *_: customers,
        script=LUA,
    )
    if options.statements > 0:
        _pgstats.ensure_extension(url)
    with psycopg.connect(url, autocommit=True) as stats:
        if options.statements > 0:
            stats.execute("SELECT pg_stat_statements_reset()")
        for workers in options.worker_counts:
            for round_no in range(options.rounds):
                for name in _load.order(round_no):
                    print(f"bench: {workers} process(es), round {round_no + 1}, {name}", flush=True)
                    prefix = f"w{workers}-r{round_no}-{name}"
                    server = servers[name](workers)
                    try:
                        args = (server.url, "mix", customers, str(shops))
                        if options.warmup > 0:
                            _load.wrk(*args, prefix + "-w", options.warmup, options.connections, script=LUA)
                        measured = _load.measure(
                            server.url,
                            server.process.pid,
                            stats,
                            DATABASE,
                            "mix",
                            customers,
                            str(shops),
                            prefix,
                            options.duration,
                            options.connections,
                            script=LUA,
                        )
                    finally:
                        server.stop()
                    runs.setdefault((workers, name), []).append(measured)
                    heading = f"{workers} process(es), round {round_no + 1}, {name}"
                    statements += _costliest(stats, options.statements, heading)
    return runs, statements


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _table(options: argparse.Namespace, runs: Runs) -> list[str]:
    lines = [
        "| processes | server | req/s | p50 ms | p95 ms | p99 ms | error rate | server CPU ms/req"
        " | PostgreSQL CPU ms/req | new sessions |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for workers in options.worker_counts:
        for name in ("service", "raw"):
            got = runs[(workers, name)]
            requests = sum(m.wrk.requests for m in got)
            errors = sum(sum(m.wrk.errors.values()) for m in got)
            lines.append(
                f"| {workers} | {name} | {_median([m.wrk.rate for m in got]):,.0f}"
                f" | {_median([m.wrk.p50_ms for m in got]):.1f} | {_median([m.wrk.p95_ms for m in got]):.1f}"
                f" | {_median([m.wrk.p99_ms for m in got]):.1f} | {errors / requests:.4%}"
                f" | {_median([10 * m.server_cpu / m.wrk.rate for m in got]):.2f}"
                f" | {_median([10 * m.database_cpu / m.wrk.rate for m in got]):.2f}"
                f" | {max(m.new_sessions for m in got)} |"
            )
    lines += ["", "Ratios (service / raw, medians of the rounds) against the targets:", ""]
    lines += ["| processes | throughput ratio (target >= 0.50) | p99 ratio (target <= 2.0) |", "|---|---|---|"]
    for workers in options.worker_counts:
        service, raw = runs[(workers, "service")], runs[(workers, "raw")]
        rate = _median([m.wrk.rate for m in service]) / _median([m.wrk.rate for m in raw])
        p99 = _median([m.wrk.p99_ms for m in service]) / _median([m.wrk.p99_ms for m in raw])
        lines.append(f"| {workers} | {rate:.2f} | {p99:.1f} |")
    lines += ["", "Every run (load1: the 1-minute load average as it began):", ""]
    lines += ["| processes | round | server | req/s | p95 ms | p99 ms | errors | server CPU % | PG CPU % | load1 |"]
    lines += ["|---|---|---|---|---|---|---|---|---|---|"]
    for workers in options.worker_counts:
        for name in ("service", "raw"):
            for round_no, m in enumerate(runs[(workers, name)]):
                lines.append(
                    f"| {workers} | {round_no + 1} | {name} | {m.wrk.rate:,.0f} | {m.wrk.p95_ms:.1f}"
                    f" | {m.wrk.p99_ms:.1f} | {m.wrk.errors or 0} | {m.server_cpu:.0f} | {m.database_cpu:.0f}"
                    f" | {m.load1:.2f} |"
                )
    return lines


def _ledger(database_url: str) -> tuple[int, int, int, int]:
    """Purchases, redemptions, verified codes, and wallets whose balance is not their entries' sum."""
    with psycopg.connect(_plain(database_url)) as conn:
        row = conn.execute(
            """
            SELECT (SELECT count(*) FROM transactions), (SELECT count(*) FROM redemptions),
                   (SELECT count(*) FROM redemptions WHERE status = 'used'),
                   (SELECT count(*) FROM wallets w
                     WHERE w.balance <> (SELECT coalesce(sum(amount), 0) FROM ledger_entries e
                                          WHERE e.vendor_id = w.vendor_id AND e.wallet_id = w.id))
            """
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2]), int(row[3])


def run(argv: list[str] | None = None) -> str:
    options = _options(argv or [])
    started = dt.datetime.now(dt.UTC)
    load_before = os.getloadavg()
    database_url = scratch_database(DATABASE)
    work = Path(tempfile.mkdtemp(prefix="bench-mix-"))
    print(f"bench: servers' logs in {work}", flush=True)

    def service(workers: int) -> _servers.Server:
        return _servers.start_service(database_url, workers, work)

    first = service(1)
    try:
        print(f"bench: {options.vendors} shops through the admin API", flush=True)
        shops = asyncio.run(_terms(first.url, _servers.seed_vendors(first, options.vendors, 0)))
    finally:
        first.stop()
    (work / "shops.txt").write_text("".join(f"{v} {token} {reward}\n" for v, token, reward in shops))
    each = max(1, options.customers // options.vendors)
    print(f"bench: {each * options.vendors:,} customers in bulk SQL, then VACUUM ANALYZE", flush=True)
    _seed_customers(database_url, [v for v, _, _ in shops], each, work / "customers.txt")
    _servers.settle_statistics(database_url, analyse=True)

    def raw(workers: int) -> _servers.Server:
        return _servers.start_raw(database_url, shops[0][0], workers, -(-options.connections // workers), work)

    runs, statements = _rounds(options, {"service": service, "raw": raw}, work)
    purchases, redemptions, verified, off = _ledger(database_url)
    load_after = os.getloadavg()
    command = " ".join(["uv run just bench mix", *(argv or [])])
    priming = _load.primed(options)
    lines = [
        *preamble(
            "A till's mix over many shops against the same SQL run bare", command, started, load_before, load_after
        ),
        "The rounds alternate service and raw; the ratios of runs made back to back are the figures to read.",
        "",
        f"Setup: `loyalty serve --workers N` (granian, uvloop, test mode off, log level WARNING, in-process job"
        " worker, rate limiter in process memory) and the raw app (`bench/_raw_app.py`: granian N workers,"
        f" uvloop, a psycopg pool of {options.connections} connections over the workers, no auth), N in"
        f" {', '.join(map(str, options.worker_counts))}. {options.vendors} shops made through the admin API"
        " (one plan without a rate ceiling; per shop an API client, an earn rule of a point per euro and one"
        f" reward of 10 points); {each * options.vendors:,} customers spread evenly over them, written in"
        f" bulk SQL with a loyalty card, a wallet and {POINTS:,} points (an adjustment entry and its lot);"
        f" then `VACUUM ANALYZE`. wrk `-t{_load.THREADS} -c{options.connections} -d{options.duration:g}s`"
        f" after a {options.warmup:g} s warm-up; {options.rounds} round(s) per process count"
        + (f"; {priming}." if priming else "."),
        "",
        "The mix (`bench/wrk/mix.lua`): a random customer of a random shop per request, with that shop's"
        " token; 70% `POST /api/v1/transactions` (one to three lines, a new key), 15%"
        " `GET /api/v1/customers/lookup` by card, 10% `GET /api/v1/rewards`, 5% `POST /api/v1/redemptions`"
        " whose code a later request verifies (`POST /api/v1/redemptions/{code}/verify`). The raw app runs"
        " each call's SQL: the plain earn write of `bench/_raw_earn.py`, the lookup's statement, the reward"
        " list's count, page and branches, the plain redemption and the verify's update; the vendor comes"
        " from an `X-Bench-Vendor` header instead of a token.",
        "",
        "## Results (medians of the rounds; error rate: all rounds)",
        "",
        *_table(options, runs),
        "",
        f"After the runs: {purchases:,} purchases, {redemptions:,} redemptions ({verified:,} verified); wallets"
        f" whose balance is not the sum of their entries: {off}.",
    ]
    if statements:
        lines += ["", "## Each run's costliest statements (pg_stat_statements, top level)", "", *statements]
    report = "\n".join(lines) + "\n"
    errors = sum(sum(m.wrk.errors.values()) for got in runs.values() for m in got)
    if errors or off:
        raise RuntimeError(f"bench mix: {errors} errors, {off} wallets off their entries\n{report}")
    return report
