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

DATABASE = scratch_name("loyalty_bench_returns")
RESULTS = Path(__file__).parent / "results"
LUA = Path(__file__).parent / "wrk" / "returns.lua"
CALL = "return"
CALLS = {CALL: "`POST /api/v1/transactions/{id}/returns` (a random purchase, new key, 100 cents)"}
PURCHASE_TOTAL = 1_000_000
RETURNED = 100

Starter = Callable[[], _servers.Server]
Runs = dict[tuple[str, str], list[_load.Measured]]


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench returns", description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=15, help="seconds of measured load per run")
    parser.add_argument("--connections", type=int, default=32, help="wrk connections")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=float, default=3, help="seconds of unmeasured load before each run")
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


def _rounds(options: argparse.Namespace, servers: dict[str, Starter], token: str, purchases: Path) -> Runs:
    """Each run has its server to itself (the other is stopped), as in ``bench.request_path``."""
    head, _, query = SERVER.partition("?")
    url = f"{head.rsplit('/', 1)[0]}/{DATABASE}" + (f"?{query}" if query else "")
    runs: Runs = {}
    with psycopg.connect(url, autocommit=True) as stats:
        for round_no in range(options.rounds):
            for name in ["service", "raw"] if round_no % 2 == 0 else ["raw", "service"]:
                print(f"bench: round {round_no + 1}, {CALL}, {name}", flush=True)
                prefix = f"r{round_no}-{name}"
                server = servers[name]()
                try:
                    if options.warmup > 0:
                        _load.wrk(
                            server.url,
                            CALL,
                            purchases,
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
                        purchases,
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


def _profiles(options: argparse.Namespace, start: Starter, token: str, purchases: Path) -> list[str]:
    print("bench: profiling the service", flush=True)
    service = start()
    out = RESULTS / "returns-return.collapsed.txt"
    try:
        workers = [pid for pid in _load.process_tree(service.process.pid) if pid != service.process.pid]
        _load.wrk(service.url, CALL, purchases, token, "pw", options.warmup, options.connections, script=LUA)
        recording = _profile.record(workers[0] if workers else service.process.pid, options.duration, out)
        _load.wrk(service.url, CALL, purchases, token, "p", options.duration, options.connections, script=LUA)
        _profile.finish(recording, options.duration)
    finally:
        service.stop()
    lines = ["## Where the time goes (py-spy, one service worker)", ""]
    return lines + _profile.markdown(f"{CALL}: {CALLS[CALL]}", _profile.summarise(out), f"bench/results/{out.name}")


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
    started = dt.datetime.now(dt.UTC)
    load_before = os.getloadavg()
    database_url = scratch_database(DATABASE)
    work = Path(tempfile.mkdtemp(prefix="bench-returns-"))
    print(f"bench: servers' logs in {work}", flush=True)
    pool = -(-options.connections // options.workers)

    def service() -> _servers.Server:
        return _servers.start_service(database_url, options.workers, work)

    first = service()
    try:
        print(f"bench: registering {options.customers} customers and one purchase each", flush=True)
        seeded = _servers.seed(first, options.customers)
        ids = asyncio.run(_purchases(first.url, seeded.vendor_id, seeded.token, seeded.customers))
    finally:
        first.stop()
    _servers.settle_statistics(database_url, analyse=True)

    def raw() -> _servers.Server:
        return _servers.start_raw(database_url, seeded.vendor_id, options.workers, pool, work)

    purchases = work / "purchases.txt"
    purchases.write_text("".join(f"{tid}\n" for tid in ids))
    runs = _rounds(options, {"service": service, "raw": raw}, seeded.token, purchases)
    profile = _profiles(options, service, seeded.token, purchases) if options.profile else []
    returned, wrong, off = _checked(database_url)
    load_after = os.getloadavg()
    command = " ".join(["uv run just bench returns", *(argv or [])])
    lines = [
        *preamble("A till's return against the raw-SQL return", command, started, load_before, load_after),
        "The rounds alternate service and raw; the ratios of runs made back to back are the figures to read.",
        "",
        f"Setup: `loyalty serve --workers {options.workers}` (granian, uvloop, test mode off, log level WARNING,"
        " rate limiter in process memory) and the raw app (`bench/_raw_app.py` with `bench/_raw_return.py`:"
        f" granian {options.workers} workers, uvloop, psycopg `AsyncConnectionPool` of {pool} connections per"
        f" process, no auth). {options.customers:,} customers of one vendor registered through the API, a point"
        f" per euro, one purchase of {PURCHASE_TOTAL:,} cents each; then `VACUUM ANALYZE`. wrk"
        f" `-t{_load.THREADS} -c{options.connections} -d{options.duration:g}s` after a {options.warmup:g} s"
        f" warm-up; {options.rounds} round(s). Each request returns {RETURNED} cents of a random purchase"
        " with a new key: one point back, from the purchase's lot.",
        "",
        "The raw return (`bench/_raw_return.py`): in one transaction, check the key, lock the purchase and"
        " the customer's wallet, prorate, insert the `return` entry, take the lots that end first, lower the"
        " balance, insert the return and move the purchase's totals. No merge family, branch or expiry of"
        " due lots: everything else the service does is counted against it.",
        "",
        f"Calls: {CALL} = {CALLS[CALL]}.",
        "",
        "## Results (medians of the rounds; sessions: the most of any round; errors: all rounds)",
        "",
        *_table(options, runs),
        "",
        f"After the runs: {returned:,} returns in the database; purchases whose totals disagree with their"
        f" returns or pass their own total: {wrong}; wallets whose balance is not the sum of their entries: {off}.",
        "",
        *profile,
    ]
    return "\n".join(lines) + "\n"
