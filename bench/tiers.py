"""The till's purchase and lookup for a vendor without a ladder against one with a 4-tier ladder.

``LOYALTY_BENCH_OWN_POSTGRES=1 uv run just bench tiers [--duration 10 --warmup 3 --connections 16
--rounds 2 --workers 2 --customers 400 --months 11 --profile]``

On the bench's own cluster (``bench._cluster``: ``pg_stat_statements`` preloaded) ``loyalty serve``
migrates a fresh database; two vendors on one plan (features ``tiers`` and ``campaigns`` on) each
register ``--customers`` customers through the public API and get ``bench.earning``'s terms (an earn
rule, two campaigns). One of them gets a ladder of four tiers by spend through
``PUT /admin/v1/vendors/{id}/tiers``. Both vendors' customers get ``--months`` past months of
qualifying spend (``tier_months``, as the till's purchases write them; a quarter of the customers
each at 0, 10, 50 and 200 euro a month), so with the ladder every tier is held by a quarter of them.
Then the purchase (``bench/wrk/earning.lua``) and the lookup (``bench/wrk/request_path.lua``) run at
each vendor, the order alternating over the rounds, on one server; ``bench._variants`` records each
run's rate, latencies, server CPU and what PostgreSQL did (statements, rows written).
"""

from __future__ import annotations

import argparse
import functools
import os
from collections import Counter

import httpx
import psycopg

from bench import _load, _servers, _variants, earning
from bench._support import scratch_name
from bench.request_path import preamble

DATABASE = scratch_name("loyalty_bench_tiers")
PLAN: dict[str, object] = {"features": {"tiers": True, "campaigns": True}}
LADDER = {
    "basis": "spend",
    "period_months": 12,
    "grace_months": 0,
    "tiers": [
        {"key": "bronze", "name": "Bronze", "threshold": 0, "multiplier_percent": 100},
        {"key": "silver", "name": "Silver", "threshold": 10_000, "multiplier_percent": 110},
        {"key": "gold", "name": "Gold", "threshold": 50_000, "multiplier_percent": 125},
        {"key": "platinum", "name": "Platinum", "threshold": 200_000, "multiplier_percent": 150},
    ],
}
MONTHLY_SPEND = (0, 1_000, 5_000, 20_000)
"""Cents a month of the customers of each quarter: over 11 months 0, 110, 550 and 2,200 euro."""
WITHOUT, WITH = "no ladder", "4-tier ladder"
NEEDLES = (
    "loyalty_core/tiers/",
    "loyalty_core/earning/",
    "loyalty_http/earning/",
    "psycopg/",
    "sqlalchemy/",
    "json/",
    "msgspec",
)
"""Where the purchase's time may go: each profile's samples in or below these files."""


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench tiers", description=__doc__.split("\n\n")[0])
    _variants.add_options(parser)
    parser.add_argument("--months", type=int, default=11, help="past months of qualifying spend per customer")
    return parser.parse_args(argv)


def _history(url: str, shops: list[_servers.Seeded], months: int) -> None:
    """``months`` past months of spend for every customer of ``shops``, by quarter (``MONTHLY_SPEND``)."""
    with psycopg.connect(url, autocommit=True) as conn:
        for shop in shops:
            for n, (customer_id, _card) in enumerate(shop.customers):
                spend = MONTHLY_SPEND[n % len(MONTHLY_SPEND)]
                if not spend:
                    continue
                conn.execute(
                    "INSERT INTO tier_months (vendor_id, customer_id, month, spend, points)"
                    " SELECT %(v)s, %(c)s,"
                    " (date_trunc('month', now() AT TIME ZONE 'UTC') - make_interval(months => m))::date,"
                    " %(s)s, %(s)s / 100 FROM generate_series(1, %(n)s) m",
                    {"v": shop.vendor_id, "c": customer_id, "s": spend, "n": months},
                )


def _held(server: _servers.Server, shop: _servers.Seeded, sample: int = 40) -> Counter[str]:
    """The tiers the lookup shows for the first ``sample`` customers of ``shop``."""
    held: Counter[str] = Counter()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for _id, card in shop.customers[:sample]:
            response = client.get(
                "/api/v1/customers/lookup",
                params={"identifier": card},
                headers={"Authorization": f"Bearer {shop.token}"},
            )
            response.raise_for_status()
            tier = response.json()["data"].get("tier")
            held[tier["key"] if tier else "none"] += 1
    return held


def _verdicts(runs: list[_variants.Run]) -> list[str]:
    without, with_ = (_variants.medians(runs, "transaction", name) for name in (WITHOUT, WITH))
    rows = with_["rows"] - without["rows"]
    cpu = with_["server_ms"] / without["server_ms"] - 1
    look_without, look_with = (_variants.medians(runs, "lookup", name) for name in (WITHOUT, WITH))
    more = look_with["statements"] - look_without["statements"]
    scans = look_with["index_scans"] - look_without["index_scans"]

    def met(ok: bool) -> str:
        return "met" if ok else "MISSED"

    return [
        "| target | without | with | difference | verdict |",
        "|---|---|---|---|---|",
        f"| purchase: at most one more row written | {without['rows']:.2f} | {with_['rows']:.2f} | {rows:+.2f}"
        f" | {met(rows <= 1.05)} |",
        f"| purchase: at most 10% more server CPU | {without['server_ms']:.2f} ms | {with_['server_ms']:.2f} ms"
        f" | {100 * cpu:+.1f}% | {met(cpu <= 0.10)} |",
        f"| lookup: at most one more statement | {look_without['statements']:.2f} | {look_with['statements']:.2f}"
        f" | {more:+.2f} | {met(more <= 1.05)} |",
        f"| lookup: index scans (the statements' reads are indexed) | {look_without['index_scans']:.2f}"
        f" | {look_with['index_scans']:.2f} | {scans:+.2f} | seq scans/req {look_with['seq_scans']:.3f} |",
    ]


def run(argv: list[str] | None = None) -> str:
    options = _options(argv or [])
    bench = _variants.set_up(options, DATABASE, "tiers")
    plain, work, service = bench.plain, bench.work, bench.service
    single = functools.partial(bench.service, 1)

    first = service()
    try:
        print(f"bench: two vendors of {options.customers} customers each, terms, a ladder for one", flush=True)
        ladder_shop, plain_shop = _servers.seed_vendors(first, 2, 2 * options.customers, PLAN)
        for shop in (ladder_shop, plain_shop):
            earning._terms(first, shop.vendor_id)
        admin = {"Authorization": f"Bearer {_servers.ADMIN_TOKEN}"}
        put = httpx.put(f"{first.url}/admin/v1/vendors/{ladder_shop.vendor_id}/tiers", json=LADDER, headers=admin)
        if put.status_code != 200:
            raise RuntimeError(f"PUT tiers: {put.status_code} {put.text}")
        _history(plain, [ladder_shop, plain_shop], options.months)
        held_before = _held(first, ladder_shop)
    finally:
        first.stop()
    _servers.settle_statistics(bench.database_url, analyse=True)
    variants = [
        _variants.Variant(WITHOUT, _servers.write_customers([plain_shop], work / "plain.txt"), plain_shop.token),
        _variants.Variant(WITH, _servers.write_customers([ladder_shop], work / "ladder.txt"), ladder_shop.token),
    ]
    calls = ["transaction", "lookup"]
    runs = _variants.rounds(options, service, DATABASE, plain, calls, variants)
    profile = (
        [
            "## Where the purchase's time goes (py-spy, `loyalty serve --workers 1`, each vendor)",
            "",
            *_variants.profiles(options, single, "transaction", variants, "tiers", NEEDLES),
        ]
        if options.profile
        else []
    )
    names = [v.name for v in variants]
    mixes = []
    for call in calls:
        lines, _sets = _variants.statement_mix(runs, call, names)
        mixes += [f"### {call}", "", *lines, "", "Rows written per request by table:", ""]
        mixes += [*_variants.rows_by_table(runs, call, names), ""]
    command = " ".join(["LOYALTY_BENCH_OWN_POSTGRES=1 uv run just bench tiers", *(argv or [])])
    held = ", ".join(f"{key} {n}" for key, n in sorted(held_before.items()))
    lines = [
        *preamble(
            "Tiers at the till: a vendor without a ladder against one with four tiers",
            command,
            bench.started,
            bench.load_before,
            os.getloadavg(),
        ),
        "The rounds alternate the two vendors on one server; the ratios of runs made back to back are the"
        " figures to read, and the per-request counts (statements, rows) do not move with the load.",
        "",
        f"Setup: the bench's own PostgreSQL 15 cluster (`bench/_cluster.py`, pg_stat_statements preloaded);"
        f" `loyalty serve --workers {options.workers}` (granian, uvloop, test mode off, log level WARNING, no"
        f" Redis); two vendors on one plan (`tiers` and `campaigns` on), {options.customers:,} customers each"
        " registered through the API, each vendor with `bench.earning`'s earn rule and two campaigns. The"
        " ladder (`PUT /admin/v1/vendors/{id}/tiers`): by spend over 12 months, Bronze 0 (100%), Silver"
        " 10,000 cents (110%), Gold 50,000 (125%), Platinum 200,000 (150%). Both vendors' customers have"
        f" {options.months} past months of spend in `tier_months` (a quarter each at 0, 10, 50 and 200 euro a"
        f" month); the lookup showed, for 40 of the ladder vendor's customers before the runs: {held}. Then"
        f" `VACUUM ANALYZE`. wrk `-t{_load.THREADS} -c{options.connections} -d{options.duration:g}s` after"
        f" {options.warmup:g} s of warm-up; {options.rounds} rounds.",
        "",
        "Calls: " + "; ".join(f"{c} = {_variants.CALLS[c]}" for c in calls) + ".",
        "",
        "## Results (medians of the rounds; errors: all rounds)",
        "",
        *_variants.table(runs, calls, names),
        "",
        "## Targets",
        "",
        *_verdicts(runs),
        "",
        "## Statements sent per request (pg_stat_statements, top level, all rounds; under 0.02/req left out)",
        "",
        *mixes,
        *profile,
    ]
    return "\n".join(lines) + "\n"
