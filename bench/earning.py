"""A till's purchase against the raw-SQL earn write: what the service costs over it.

``uv run just bench earning [--duration 15 --connections 32 --rounds 3 --warmup 3 --workers 2
--customers 1000 --vendors 1 --max-transactions 0 --profile]``

As ``bench.request_path``: on a fresh database ``loyalty serve`` (granian, uvloop, test mode off)
migrates the schema; one vendor (a plan with campaigns and a transaction meter of
``--max-transactions``, 0 for none) registers ``--customers`` customers through the public API and
gets, through the admin API, one earn rule (a point per euro) and two active campaigns: double
points, and 5 points per unit of a product (one of the purchase's three lines). wrk drives
``POST /api/v1/transactions`` (a random customer by card, a new idempotency key per request, three
lines) at the service and at the raw app's earn write (``bench._raw_earn``), the order alternating
over the rounds. With ``--vendors N`` the customers are dealt out among N vendors alike (one plan,
the same terms each) and each request goes with its customer's vendor's token.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import httpx
import psycopg

from bench import _load, _profile, _servers
from bench._support import scratch_name

DATABASE = scratch_name("loyalty_bench_earning")
LUA = Path(__file__).parent / "wrk" / "earning.lua"
CALL = "transaction"
CALLS = {CALL: "`POST /api/v1/transactions` (a random customer by card, new key, three lines)"}
TERMS = (
    ("earn-rules", {"name": "Point per euro", "points_per_unit": 1, "unit_amount": 100}),
    ("campaigns", {"name": "Double points", "family": "transaction", "kind": "multiplier", "multiplier": 2}),
    (
        "campaigns",
        {
            "name": "Croissant bonus",
            "family": "transaction",
            "kind": "product_points",
            "points": 5,
            "skus": ["CROISSANT"],
            "combinable": True,
        },
    ),
)


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench earning", description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=15, help="seconds of measured load per run")
    parser.add_argument("--connections", type=int, default=32, help="wrk connections")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=float, default=3, help="seconds of unmeasured load before each run")
    _load.add_prime(parser)
    parser.add_argument("--workers", type=int, default=2, help="server processes of each server")
    parser.add_argument("--customers", type=int, default=1000, help="customers over all vendors")
    parser.add_argument("--vendors", type=int, default=1, help="vendors, the customers dealt out among them")
    parser.add_argument("--max-transactions", type=int, default=0, help="the plan's monthly transactions (0: no meter)")
    parser.add_argument("--profile", action="store_true", help="py-spy one service worker, after the rounds")
    options = parser.parse_args(argv)
    options.calls = [CALL]
    return options


def _terms(service: _servers.Server, vendor_id: int) -> None:
    admin = {"Authorization": f"Bearer {_servers.ADMIN_TOKEN}"}
    with httpx.Client(base_url=service.url, timeout=30) as client:
        for kind, body in TERMS:
            response = client.post(f"/admin/v1/vendors/{vendor_id}/{kind}", json=body, headers=admin)
            if response.status_code != 201:
                raise RuntimeError(f"{kind}: {response.status_code} {response.text}")


def _written(database_url: str) -> tuple[int, int, int]:
    """Transactions, earn entries and wallets whose balance is not the sum of their entries."""
    plain = database_url.replace("postgresql+psycopg://", "postgresql://", 1)
    with psycopg.connect(plain) as conn:
        row = conn.execute(
            """
            SELECT (SELECT count(*) FROM transactions),
                   (SELECT count(*) FROM ledger_entries WHERE type = 'earn'),
                   (SELECT count(*) FROM wallets w
                     WHERE w.balance <> coalesce(
                         (SELECT sum(amount) FROM ledger_entries e WHERE e.wallet_id = w.id), 0))
            """
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2])


def run(argv: list[str] | None = None) -> str:
    options = _options(argv or [])
    bench = _load.Bench(options, DATABASE, "earning")
    started, load_before, database_url, work = bench.started, bench.load_before, bench.database_url, bench.work
    service = bench.service

    plan = {"features": {"campaigns": True}, "max_transactions": options.max_transactions}
    first = service()
    try:
        print(f"bench: {options.vendors} vendor(s), {options.customers} customers through the API", flush=True)
        shops = _servers.seed_vendors(first, options.vendors, options.customers, plan)
        print("bench: one earn rule and two campaigns each through the admin API", flush=True)
        for shop in shops:
            _terms(first, shop.vendor_id)
    finally:
        first.stop()
    _servers.settle_statistics(database_url, analyse=True)

    seeded = shops[0]

    # several vendors: each request names its own (X-Bench-Vendor, bench/wrk/earning.lua)
    raw = bench.raw(seeded.vendor_id)

    customers = _servers.write_customers(shops, work / "customers.txt")

    def data(call: str, prefix: str, seconds: float) -> Path:
        return customers

    servers = {"service": service, "raw": raw}
    runs = _load.ab_rounds(options, servers, DATABASE, seeded.token, data, script=LUA)
    profile = (
        _profile.profile_calls(options, service, seeded.token, data, bench="earning", calls=CALLS, script=LUA)
        if options.profile
        else []
    )
    transactions, entries, off = _written(database_url)
    about = [
        f"Setup: `loyalty serve --workers {options.workers}` (granian, uvloop, test mode off, log level WARNING,"
        " rate limiter in process memory; plan limit 10,000,000/min, campaigns on, transaction meter "
        + (f"{options.max_transactions:,} a month" if options.max_transactions else "off")
        + ") and the raw app"
        f" (`bench/_raw_app.py` with `bench/_raw_earn.py`: granian {options.workers} workers, uvloop, psycopg"
        f" `AsyncConnectionPool` of {bench.pool} connections per process, no auth). {options.customers:,} customers of"
        + (f" {options.vendors} vendors (dealt out, one plan)" if options.vendors > 1 else " one vendor")
        + " registered through `POST /api/v1/customers`; one earn rule (a point per euro) and two"
        " campaigns (double points; 5 points per unit of one sku, combinable) made through the admin API;"
        f" then `VACUUM ANALYZE`. wrk `-t{_load.THREADS} -c{options.connections} -d{options.duration:g}s`"
        f" after a {options.warmup:g} s warm-up; {options.rounds} round(s). Each request: a random customer by"
        " loyalty card, a new idempotency key, a total of 1050 cents and three lines (one of the bonus sku),"
        " so the service answers 30 points (10 base, 10 double, 10 product bonus) with three entries.",
        "The raw earn write (`bench/_raw_earn.py`): in one transaction, find the customer and wallet by card,"
        " check the key, insert the transaction and its three lines, credit the wallet, insert the earn entry"
        " and its lot; points are the base rate alone computed inline: no engine, no campaigns, no meter, no"
        " branch, no moment facts, no auth.",
    ]
    after = (
        f"After the runs: {transactions:,} transactions and {entries:,} earn entries in the database; wallets"
        f" whose balance is not the sum of their entries: {off}."
    )
    command = " ".join(["uv run just bench earning", *(argv or [])])
    title = "A till's purchase against the raw-SQL earn write"
    return _load.ab_report(
        title, command, started, load_before, options, runs, about=about, calls=CALLS, after=[after], profile=profile
    )
