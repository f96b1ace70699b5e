"""A till's return against the raw-SQL return: what the service costs over it.

``uv run just bench returns [--duration 15 --connections 32 --rounds 3 --warmup 3 --workers 2
--customers 1000 --profile]``

As ``bench.earning``: on a fresh database ``loyalty serve`` (granian, uvloop, test mode off)
migrates the schema; one vendor registers ``--customers`` customers through the public API, gets a
point per euro through the admin API, and each customer makes one purchase of 10,000.00 (10,000
points). wrk drives ``POST /api/v1/transactions/{id}/returns`` (a random purchase, a new idempotency
key, 100 cents returned, so one point back) at the service and at the raw app's return
(``bench._raw_return``), the order alternating over the rounds. Target: at least half the raw
return's throughput, p99 at most twice its p99.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import httpx
import psycopg

from bench import _load, _profile, _servers
from bench._support import scratch_name

DATABASE = scratch_name("loyalty_bench_returns")
LUA = Path(__file__).parent / "wrk" / "returns.lua"
CALL = "return"
CALLS = {CALL: "`POST /api/v1/transactions/{id}/returns` (a random purchase, new key, 100 cents)"}
PURCHASE_TOTAL = 1_000_000
RETURNED = 100


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench returns", description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=15, help="seconds of measured load per run")
    parser.add_argument("--connections", type=int, default=32, help="wrk connections")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=float, default=3, help="seconds of unmeasured load before each run")
    _load.add_prime(parser)
    parser.add_argument("--workers", type=int, default=2, help="server processes of each server")
    parser.add_argument("--customers", type=int, default=1000, help="customers, each with one purchase")
    parser.add_argument("--profile", action="store_true", help="py-spy one service worker, after the rounds")
    options = parser.parse_args(argv)
    options.calls = [CALL]
    return options


async def _purchases(url: str, vendor_id: int, token: str, customers: list[tuple[int, str]]) -> list[int]:
    """A point per euro, then one purchase per customer; the purchases' ids."""
    admin = {"Authorization": f"Bearer {_servers.ADMIN_TOKEN}"}
    vendor = {"Authorization": f"Bearer {token}"}
    ids: list[int] = []
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        rule = {"name": "Point per euro", "points_per_unit": 1, "unit_amount": 100}
        made = await client.post(f"/admin/v1/vendors/{vendor_id}/earn-rules", json=rule, headers=admin)
        if made.status_code != 201:
            raise RuntimeError(f"earn rule: {made.status_code} {made.text}")
        queue = list(customers)

        async def buy() -> None:
            while queue:
                _, card = queue.pop()
                body = {"identifier": card, "idempotency_key": f"seed-{card}", "total_amount": PURCHASE_TOTAL}
                answer = await client.post("/api/v1/transactions", json=body, headers=vendor)
                if answer.status_code != 201:
                    raise RuntimeError(f"purchase: {answer.status_code} {answer.text}")
                ids.append(int(answer.json()["data"]["id"]))

        await asyncio.gather(*(buy() for _ in range(8)))
    return sorted(ids)


def _checked(database_url: str) -> tuple[int, int, int]:
    """Returns written, purchases whose totals disagree with their returns (or pass their own total
    and points), and wallets whose balance is not the sum of their entries."""
    plain = database_url.replace("postgresql+psycopg://", "postgresql://", 1)
    with psycopg.connect(plain) as conn:
        row = conn.execute(
            """
            SELECT (SELECT count(*) FROM transaction_returns),
                   (SELECT count(*) FROM transactions t
                     WHERE t.returned_amount > t.total_amount OR t.points_reversed > t.points_earned
                        OR t.returned_amount <> coalesce((SELECT sum(r.amount) FROM transaction_returns r
                                                           WHERE r.vendor_id = t.vendor_id
                                                             AND r.transaction_id = t.id), 0)),
                   (SELECT count(*) FROM wallets w
                     WHERE w.balance <> coalesce(
                         (SELECT sum(amount) FROM ledger_entries e WHERE e.wallet_id = w.id), 0))
            """
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2])


def run(argv: list[str] | None = None) -> str:
    options = _options(argv or [])
    bench = _load.Bench(options, DATABASE, "returns")
    started, load_before, database_url, work = bench.started, bench.load_before, bench.database_url, bench.work
    service = bench.service

    first = service()
    try:
        print(f"bench: registering {options.customers} customers and one purchase each", flush=True)
        seeded = _servers.seed(first, options.customers)
        ids = asyncio.run(_purchases(first.url, seeded.vendor_id, seeded.token, seeded.customers))
    finally:
        first.stop()
    _servers.settle_statistics(database_url, analyse=True)

    raw = bench.raw(seeded.vendor_id)

    purchases = work / "purchases.txt"
    purchases.write_text("".join(f"{tid}\n" for tid in ids))

    def data(call: str, prefix: str, seconds: float) -> Path:
        return purchases

    servers = {"service": service, "raw": raw}
    runs = _load.ab_rounds(options, servers, DATABASE, seeded.token, data, script=LUA)
    profile = (
        _profile.profile_calls(options, service, seeded.token, data, bench="returns", calls=CALLS, script=LUA)
        if options.profile
        else []
    )
    returned, wrong, off = _checked(database_url)
    about = [
        f"Setup: `loyalty serve --workers {options.workers}` (granian, uvloop, test mode off, log level WARNING,"
        " rate limiter in process memory) and the raw app (`bench/_raw_app.py` with `bench/_raw_return.py`:"
        f" granian {options.workers} workers, uvloop, psycopg `AsyncConnectionPool` of {bench.pool} connections per"
        f" process, no auth). {options.customers:,} customers of one vendor registered through the API, a point"
        f" per euro, one purchase of {PURCHASE_TOTAL:,} cents each; then `VACUUM ANALYZE`. wrk"
        f" `-t{_load.THREADS} -c{options.connections} -d{options.duration:g}s` after a {options.warmup:g} s"
        f" warm-up; {options.rounds} round(s). Each request returns {RETURNED} cents of a random purchase"
        " with a new key: one point back, from the purchase's lot.",
        "The raw return (`bench/_raw_return.py`): in one transaction, check the key, lock the purchase and"
        " the customer's wallet, prorate, insert the `return` entry, take the lots that end first, lower the"
        " balance, insert the return and move the purchase's totals. No merge family, branch or expiry of"
        " due lots: everything else the service does is counted against it.",
    ]
    after = (
        f"After the runs: {returned:,} returns in the database; purchases whose totals disagree with their"
        f" returns or pass their own total: {wrong}; wallets whose balance is not the sum of their entries: {off}."
    )
    command = " ".join(["uv run just bench returns", *(argv or [])])
    title = "A till's return against the raw-SQL return"
    return _load.ab_report(
        title, command, started, load_before, options, runs, about=about, calls=CALLS, after=[after], profile=profile
    )
