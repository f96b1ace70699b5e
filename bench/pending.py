"""The till's purchase at ``pending_days`` 0 and 30 beside the plain purchase.

``LOYALTY_BENCH_OWN_POSTGRES=1 uv run just bench pending [--duration 10 --warmup 3 --connections 16
--rounds 2 --workers 2 --customers 400 --profile]``

On the bench's own cluster (``bench._cluster``: ``pg_stat_statements`` preloaded) ``loyalty serve``
migrates a fresh database; three vendors on one plan (``campaigns`` on) each register
``--customers`` customers through the public API and get ``bench.earning``'s terms. Through
``PATCH /admin/v1/vendors/{id}`` one vendor's ``pending_days`` goes to 30, and another's to 30 and
back to 0; the third is never patched (the plain purchase). The purchase (``bench/wrk/earning.lua``)
then runs at each vendor, the order alternating over the rounds, on one server;
``bench._variants`` records each run's rate, latencies, server CPU and what PostgreSQL did.
"""

from __future__ import annotations

import argparse
import functools
import os

import httpx
import psycopg

from bench import _load, _servers, _variants, earning
from bench._support import scratch_name
from bench.request_path import preamble

DATABASE = scratch_name("loyalty_bench_pending")
PLAIN, ZERO, THIRTY = "plain", "pending_days 0", "pending_days 30"
CALL = "transaction"
NEEDLES = ("loyalty_core/wallet/till_pending", "loyalty_core/wallet/", "loyalty_core/earning/", "psycopg/")
"""Where the purchase's time may go: each profile's samples in or below these files."""


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench pending", description=__doc__.split("\n\n")[0])
    _variants.add_options(parser)
    return parser.parse_args(argv)


def _patch(server: _servers.Server, vendor_id: int, days: int) -> None:
    response = httpx.patch(
        f"{server.url}/admin/v1/vendors/{vendor_id}", json={"pending_days": days}, headers=_servers.ADMIN, timeout=30
    )
    if response.status_code != 200 or response.json()["data"]["pending_days"] != days:
        raise RuntimeError(f"PATCH vendor {vendor_id}: {response.status_code} {response.text}")


def _pending(url: str, vendors: dict[str, int]) -> dict[str, tuple[int, int]]:
    """Per variant: its purchases, and those whose points are not yet available."""
    found = {}
    with psycopg.connect(url) as conn:
        for name, vendor_id in vendors.items():
            row = conn.execute(
                "SELECT count(*) AS made, count(*) FILTER (WHERE points_available_at > now()) AS held"
                " FROM transactions WHERE vendor_id = %s",
                (vendor_id,),
            ).fetchone()
            assert row is not None
            found[name] = (int(str(row[0])), int(str(row[1])))
    return found


def _per_purchase(runs: list[_variants.Run], names: tuple[str, str], floor: float = 0.5) -> bool:
    """Whether two variants wrote the same tables at least ``floor`` times a purchase, each within 5%
    (what the job worker and the meter's leases write now and then is below that)."""
    per: list[dict[str, float]] = []
    for name in names:
        got = [r for r in runs if r.variant == name]
        requests = max(sum(r.wrk.requests for r in got), 1)
        tables: dict[str, float] = {}
        for r in got:
            for table, n in r.cost.table_rows.items():
                tables[table] = tables.get(table, 0.0) + n / requests
        per.append({t: n for t, n in tables.items() if n >= floor})
    a, b = per
    return a.keys() == b.keys() and all(abs(a[t] - b[t]) <= 0.05 * max(a[t], b[t]) for t in a)


def run(argv: list[str] | None = None) -> str:
    options = _options(argv or [])
    bench = _variants.set_up(options, DATABASE, "pending")
    plain, work, service = bench.plain, bench.work, bench.service
    single = functools.partial(bench.service, 1)

    first = service()
    try:
        print(f"bench: three vendors of {options.customers} customers each, terms, pending days", flush=True)
        shops = _servers.seed_vendors(first, 3, 3 * options.customers, {"features": {"campaigns": True}})
        for shop in shops:
            earning._terms(first, shop.vendor_id)
        by_name = dict(zip((PLAIN, ZERO, THIRTY), shops, strict=True))
        _patch(first, by_name[ZERO].vendor_id, 30)
        _patch(first, by_name[ZERO].vendor_id, 0)
        _patch(first, by_name[THIRTY].vendor_id, 30)
    finally:
        first.stop()
    _servers.settle_statistics(bench.database_url, analyse=True)
    variants = [
        _variants.Variant(name, _servers.write_customers([shop], work / f"{shop.vendor_id}.txt"), shop.token)
        for name, shop in by_name.items()
    ]
    names = [v.name for v in variants]
    runs = _variants.rounds(options, service, DATABASE, plain, [CALL], variants)
    profile = (
        [
            "## Where the purchase's time goes (py-spy, `loyalty serve --workers 1`, plain and at 30)",
            "",
            *_variants.profiles(options, single, CALL, [variants[0], variants[2]], "pending", NEEDLES),
        ]
        if options.profile
        else []
    )
    mix, _ = _variants.statement_mix(runs, CALL, names)
    _, sets = _variants.statement_mix(runs, CALL, names, floor=0.5)
    held = _pending(plain, {name: shop.vendor_id for name, shop in by_name.items()})
    m = {name: _variants.medians(runs, CALL, name) for name in names}
    same = sets[PLAIN] == sets[ZERO]
    by_table = _variants.rows_by_table(runs, CALL, names)
    per_write = _per_purchase(runs, (PLAIN, ZERO))
    only_30 = sorted(sets[THIRTY] - sets[PLAIN])
    gone_30 = sorted(sets[PLAIN] - sets[THIRTY])
    cpu_30 = m[THIRTY]["server_ms"] / m[PLAIN]["server_ms"] - 1
    cpu_0 = m[ZERO]["server_ms"] / m[PLAIN]["server_ms"] - 1
    command = " ".join(["LOYALTY_BENCH_OWN_POSTGRES=1 uv run just bench pending", *(argv or [])])
    lines = [
        *preamble(
            "Pending points at the till: the purchase at pending_days 0 and 30 beside the plain purchase",
            command,
            bench.started,
            bench.load_before,
            os.getloadavg(),
        ),
        "The rounds alternate the three vendors on one server; the ratios of runs made back to back are the"
        " figures to read, and the per-request counts (statements, rows) do not move with the load.",
        "",
        f"Setup: the bench's own PostgreSQL 15 cluster (`bench/_cluster.py`, pg_stat_statements preloaded);"
        f" `loyalty serve --workers {options.workers}` (granian, uvloop, test mode off, log level WARNING, no"
        f" Redis); three vendors on one plan (`campaigns` on), {options.customers:,} customers each registered"
        " through the API, each with `bench.earning`'s earn rule and two campaigns. `plain`: never patched;"
        " `pending_days 0`: patched to 30 and back to 0 (`PATCH /admin/v1/vendors/{id}`); `pending_days 30`:"
        f" patched to 30. Then `VACUUM ANALYZE`. wrk `-t{_load.THREADS} -c{options.connections}"
        f" -d{options.duration:g}s` after {options.warmup:g} s of warm-up; {options.rounds} rounds.",
        "",
        f"Calls: {CALL} = {_variants.CALLS[CALL]}.",
        "",
        "## Results (medians of the rounds; errors: all rounds)",
        "",
        *_variants.table(runs, [CALL], names),
        "",
        "After the runs (purchases of each vendor, and those whose points are still pending): "
        + "; ".join(f"{name} {made:,} ({pending:,} pending)" for name, (made, pending) in held.items())
        + ".",
        "",
        "## Targets",
        "",
        "| target | figure | verdict |",
        "|---|---|---|",
        f"| at 0, the plain purchase's statements (each sent at least 0.5 times a request) | "
        f"{len(sets[ZERO])} statements, plain {len(sets[PLAIN])} | {'met: the same' if same else 'MISSED'} |",
        f"| at 0, the plain purchase's rows written (the tables written at least 0.5 times a purchase, each"
        f" within 5%) | {m[ZERO]['rows']:.2f}/req in all, plain {m[PLAIN]['rows']:.2f}/req"
        f" | {'met' if per_write else 'MISSED'} |",
        f"| at 0, the plain purchase's server CPU | {m[ZERO]['server_ms']:.2f} ms/req, plain"
        f" {m[PLAIN]['server_ms']:.2f} ({100 * cpu_0:+.1f}%) | (within the runs' spread: see every run) |",
        f"| at 30: the cost | statements {m[THIRTY]['statements'] - m[PLAIN]['statements']:+.2f}/req, rows written"
        f" {m[THIRTY]['rows'] - m[PLAIN]['rows']:+.2f}/req, server CPU {100 * cpu_30:+.1f}%, p99"
        f" {m[THIRTY]['p99'] / m[PLAIN]['p99']:.2f}x | stated |",
        "",
        "Statements sent at 30 and not by the plain purchase: "
        + ("; ".join(f"`{q}`" for q in only_30) or "none")
        + ". Sent by the plain purchase and not at 30: "
        + ("; ".join(f"`{q}`" for q in gone_30) or "none")
        + ".",
        "",
        "## Rows written per request by table (pg_stat_user_tables, all rounds)",
        "",
        *by_table,
        "",
        "## Statements sent per request (pg_stat_statements, top level, all rounds; under 0.02/req left out)",
        "",
        *mix,
        "",
        *profile,
    ]
    return "\n".join(lines) + "\n"
