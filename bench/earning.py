"""A till's purchase against the raw-SQL earn write: what the service costs over it.

``uv run just bench earning [--duration 15 --connections 32 --rounds 3 --warmup 3 --workers 2
--customers 1000 --max-transactions 0 --profile]``

As ``bench.request_path``: on a fresh database ``loyalty serve`` (granian, uvloop, test mode off)
migrates the schema; one vendor (a plan with campaigns and a transaction meter of
``--max-transactions``, 0 for none) registers ``--customers`` customers through the public API and
gets, through the admin API, one earn rule (a point per euro) and two active campaigns: double
points, and 5 points per unit of a product (one of the purchase's three lines). wrk drives
``POST /api/v1/transactions`` (a random customer by card, a new idempotency key per request, three
lines) at the service and at the raw app's earn write (``bench._raw_earn``), the order alternating
over the rounds.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import httpx
import psycopg

from bench import _load, _profile, _servers
from bench._support import SERVER, scratch_database, scratch_name
from bench.request_path import _table, preamble

DATABASE = scratch_name("loyalty_bench_earning")
RESULTS = Path(__file__).parent / "results"
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

Runs = dict[tuple[str, str], list[_load.Measured]]


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench earning", description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=15, help="seconds of measured load per run")
    parser.add_argument("--connections", type=int, default=32, help="wrk connections")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=float, default=3, help="seconds of unmeasured load before each run")
    parser.add_argument("--workers", type=int, default=2, help="server processes of each server")
    parser.add_argument("--customers", type=int, default=1000)
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


def _rounds(
    options: argparse.Namespace, servers: dict[str, Callable[[], _servers.Server]], token: str, customers: Path
) -> Runs:
    """Each run has its server to itself (the other is stopped), as in ``bench.request_path``."""
    head, _, query = SERVER.partition("?")
    url = f"{head.rsplit('/', 1)[0]}/{DATABASE}" + (f"?{query}" if query else "")
    runs: Runs = {}
    with psycopg.connect(url, autocommit=True) as stats:
        for round_no in range(options.rounds):
            order = ["service", "raw"] if round_no % 2 == 0 else ["raw", "service"]
            for name in order:
                print(f"bench: round {round_no + 1}, {CALL}, {name}", flush=True)
                prefix = f"r{round_no}-{name}"
                server = servers[name]()
                try:
                    if options.warmup > 0:
                        _load.wrk(
                            server.url,
                            CALL,
                            customers,
                            token,
                            prefix + "-w",
                            options.warmup,
                            options.connections,
                            script=LUA,
                        )
                    measured = _load.measure(
                        server.url,
                        server.process.pid,
                        stats,
                        DATABASE,
                        CALL,
                        customers,
                        token,
                        prefix,
                        options.duration,
                        options.connections,
                        script=LUA,
                    )
                finally:
                    server.stop()
                runs.setdefault((CALL, name), []).append(measured)
    return runs


def _profiles(
    options: argparse.Namespace, start: Callable[[], _servers.Server], token: str, customers: Path
) -> list[str]:
    print("bench: profiling the service", flush=True)
    service = start()
    out = RESULTS / "earning-transaction.collapsed.txt"
    try:
        workers = [pid for pid in _load.process_tree(service.process.pid) if pid != service.process.pid]
        _load.wrk(service.url, CALL, customers, token, "pw", options.warmup, options.connections, script=LUA)
        recording = _profile.record(workers[0] if workers else service.process.pid, options.duration, out)
        _load.wrk(service.url, CALL, customers, token, "p", options.duration, options.connections, script=LUA)
        _profile.finish(recording, options.duration)
    finally:
        service.stop()
    lines = ["## Where the time goes (py-spy, one service worker)", ""]
    return lines + _profile.markdown(f"{CALL}: {CALLS[CALL]}", _profile.summarise(out), f"bench/results/{out.name}")


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
    started = dt.datetime.now(dt.UTC)
    load_before = os.getloadavg()
    database_url = scratch_database(DATABASE)
    work = Path(tempfile.mkdtemp(prefix="bench-earning-"))
    print(f"bench: servers' logs in {work}", flush=True)
    pool = -(-options.connections // options.workers)

    def service() -> _servers.Server:
        return _servers.start_service(database_url, options.workers, work)

    plan = {"features": {"campaigns": True}, "max_transactions": options.max_transactions}
    first = service()
    try:
        print(f"bench: registering {options.customers} customers through the API", flush=True)
        seeded = _servers.seed(first, options.customers, plan)
        print("bench: one earn rule and two campaigns through the admin API", flush=True)
        _terms(first, seeded.vendor_id)
    finally:
        first.stop()
    _servers.settle_statistics(database_url, analyse=True)

    def raw() -> _servers.Server:
        return _servers.start_raw(database_url, seeded.vendor_id, options.workers, pool, work)

    customers = work / "customers.txt"
    customers.write_text("".join(f"{cid} {card}\n" for cid, card in seeded.customers))
    runs = _rounds(options, {"service": service, "raw": raw}, seeded.token, customers)
    profile = _profiles(options, service, seeded.token, customers) if options.profile else []
    transactions, entries, off = _written(database_url)
    load_after = os.getloadavg()
    command = " ".join(["uv run just bench earning", *(argv or [])])
    lines = [
        *preamble("A till's purchase against the raw-SQL earn write", command, started, load_before, load_after),
        "The rounds alternate service and raw; the ratios of runs made back to back are the figures to read.",
        "",
        f"Setup: `loyalty serve --workers {options.workers}` (granian, uvloop, test mode off, log level WARNING,"
        " rate limiter in process memory; plan limit 10,000,000/min, campaigns on, transaction meter "
        + (f"{options.max_transactions:,} a month" if options.max_transactions else "off")
        + ") and the raw app"
        f" (`bench/_raw_app.py` with `bench/_raw_earn.py`: granian {options.workers} workers, uvloop, psycopg"
        f" `AsyncConnectionPool` of {pool} connections per process, no auth). {options.customers:,} customers of"
        " one vendor registered through `POST /api/v1/customers`; one earn rule (a point per euro) and two"
        " campaigns (double points; 5 points per unit of one sku, combinable) made through the admin API;"
        f" then `VACUUM ANALYZE`. wrk `-t{_load.THREADS} -c{options.connections} -d{options.duration:g}s`"
        f" after a {options.warmup:g} s warm-up; {options.rounds} round(s). Each request: a random customer by"
        " loyalty card, a new idempotency key, a total of 1050 cents and three lines (one of the bonus sku),"
        " so the service answers 30 points (10 base, 10 double, 10 product bonus) with three entries.",
        "",
        "The raw earn write (`bench/_raw_earn.py`): in one transaction, find the customer and wallet by card,"
        " check the key, insert the transaction and its three lines, credit the wallet, insert the earn entry"
        " and its lot; points are the base rate alone computed inline: no engine, no campaigns, no meter, no"
        " branch, no moment facts, no auth.",
        "",
        f"Calls: {CALL} = {CALLS[CALL]}.",
        "",
        "## Results (medians of the rounds; sessions: the most of any round; errors: all rounds)",
        "",
        *_table(options, runs),
        "",
        f"After the runs: {transactions:,} transactions and {entries:,} earn entries in the database; wallets"
        f" whose balance is not the sum of their entries: {off}.",
        "",
        *profile,
    ]
    return "\n".join(lines) + "\n"
