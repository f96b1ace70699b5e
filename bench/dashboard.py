"""The portal's dashboard (`GET /portal`, signed in) for a vendor with a million ledger entries, and a
`/metrics` scrape beside it: both read the ledger's folded totals plus the entries not folded yet
(TOTALS-3), so neither should cost more as the ledger grows.

The data is written with SQL (generate_series), not through the API: 20,000 customers, 1,000,000
entries over the last 365 days (70 % earned by a purchase, each with its transaction; 20 % redeemed;
10 % expired), folded by the ledger-totals fold, then 1,000 entries more that are not folded.
"""

from __future__ import annotations

import asyncio
import os
import re
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._support import machine, scratch_database, scratch_name

CUSTOMERS = 20_000
ENTRIES = 1_000_000
TAIL = 1_000
WARM_UP = 20
REQUESTS = 300
ADMIN_TOKEN = "bench-admin-token-of-32-bytes-or-more"
PASSWORD = "a long enough password"

_CUSTOMERS = """
INSERT INTO customers (vendor_id, locale, status, marketing_consent, created_at, updated_at)
SELECT %(v)s, 'nl', 'active', false, now() - interval '400 days', now() - interval '400 days'
FROM generate_series(1, %(n)s)
"""
_WALLETS = """
INSERT INTO wallets (vendor_id, customer_id, balance, created_at, updated_at)
SELECT vendor_id, id, 0, created_at, created_at FROM customers WHERE vendor_id = %(v)s
"""
# entry g falls on a moment spread evenly over the year, on wallet (and customer) g mod CUSTOMERS
_ENTRIES = """
INSERT INTO ledger_entries (vendor_id, wallet_id, type, amount, running_balance, causer_type, created_at, updated_at)
SELECT %(v)s, %(w0)s + g %% %(c)s,
       CASE WHEN g %% 10 < 7 THEN 'earn' WHEN g %% 10 < 9 THEN 'redeem' ELSE 'expire' END,
       CASE WHEN g %% 10 < 7 THEN 10 WHEN g %% 10 < 9 THEN -15 ELSE -5 END,
       1000, 'system', at, at
FROM generate_series(1, %(n)s) g,
     LATERAL (SELECT %(end)s - interval '365 days' * (1 - g::float8 / %(n)s) AS at) moment
"""
_PURCHASES = """
INSERT INTO transactions (vendor_id, customer_id, idempotency_key, total_amount, points_earned, rules_applied,
                          ledger_entry_id, created_at, updated_at)
SELECT e.vendor_id, w.customer_id, 'bench-' || e.id, 1000, 10, '[]', e.id, e.created_at, e.created_at
FROM ledger_entries e JOIN wallets w ON w.vendor_id = e.vendor_id AND w.id = e.wallet_id
WHERE e.vendor_id = %(v)s AND e.type = 'earn'
"""


def _settings(database_url: str, home: Path) -> Any:
    from loyalty_api.settings import Settings

    return Settings(
        database_url=database_url,
        admin_token=ADMIN_TOKEN,
        jwt_secret="bench-jwt-secret-of-32-bytes-or-more-xx",
        encryption_key="bench-encryption-key-of-32-bytes-or-more",
        worker="external",
        home=home,
    )


async def _fill(database_url: str, vendor_id: int) -> None:
    import psycopg

    from loyalty_core.db import make_engine, make_sessionmaker
    from loyalty_core.wallet.jobs import fold_ledger

    dsn = database_url.replace("postgresql+psycopg://", "postgresql://")
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        params: dict[str, Any] = {"v": vendor_id, "n": CUSTOMERS}
        await conn.execute(_CUSTOMERS, params)
        await conn.execute(_WALLETS, params)
        row = await (await conn.execute("SELECT min(id) FROM wallets WHERE vendor_id = %(v)s", params)).fetchone()
        assert row is not None
        entries = {"v": vendor_id, "w0": row[0], "c": CUSTOMERS, "n": ENTRIES, "end": "now()"}
        await conn.execute(_ENTRIES.replace("%(end)s", "now()"), entries)
        await conn.execute(_PURCHASES, params)
        for table in ("customers", "wallets", "ledger_entries", "transactions"):
            await conn.execute(f"VACUUM ANALYZE {table}")
        engine = make_engine(database_url)
        sessionmaker = make_sessionmaker(engine)
        await fold_ledger(sessionmaker)  # records the bound
        await fold_ledger(sessionmaker)  # folds up to it
        await engine.dispose()
        await conn.execute(_ENTRIES.replace("%(end)s", "now()"), {**entries, "n": TAIL})


def _stats(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)

    def pick(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(len(ordered) * q))]

    return statistics.median(ordered), pick(0.95), pick(0.99)


async def _measure() -> dict[str, Any]:
    import httpx

    from loyalty_api import migrate
    from loyalty_api.app import create_app

    database_url = scratch_database(scratch_name("loyalty_bench_dashboard"))
    migrate.upgrade(database_url)
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    with tempfile.TemporaryDirectory() as home:
        app = create_app(_settings(database_url, Path(home)))
        async with (
            app.lifespan(),
            httpx.AsyncClient(
                # httpx types an ASGI app's scopes as plain mappings, Litestar as TypedDicts (one protocol)
                transport=httpx.ASGITransport(app=app),  # type: ignore[arg-type]
                base_url="http://bench",
            ) as client,
        ):
            plan = (
                await client.post("/admin/v1/plans", json={"name": "bench", "max_transactions": 100_000}, headers=admin)
            ).json()["data"]
            vendor = (
                await client.post("/admin/v1/vendors", json={"name": "bench", "plan_id": plan["id"]}, headers=admin)
            ).json()["data"]
            users = f"/admin/v1/vendors/{vendor['id']}/users"
            made = await client.post(
                users, json={"email": "owner@bench.example", "role": "owner", "password": PASSWORD}, headers=admin
            )
            assert made.status_code == 201, made.text
            started = time.perf_counter()
            await _fill(database_url, vendor["id"])
            print(f"bench: data written and folded in {time.perf_counter() - started:.0f} s", flush=True)
            form = await client.get("/portal/login")
            token = re.search(r'name="csrf_token" value="([^"]+)"', form.text)
            assert token is not None
            signed = await client.post(
                "/portal/login",
                data={"email": "owner@bench.example", "password": PASSWORD, "csrf_token": token.group(1)},
            )
            assert signed.status_code == 303, signed.text
            results: dict[str, Any] = {"load before": os.getloadavg()}
            for label, path, headers in (("GET /portal", "/portal", {}), ("GET /metrics", "/metrics", admin)):
                samples = []
                for n in range(WARM_UP + REQUESTS):
                    began = time.perf_counter()
                    response = await client.get(path, headers=headers)
                    took = (time.perf_counter() - began) * 1000
                    assert response.status_code == 200, response.text
                    if n >= WARM_UP:
                        samples.append(took)
                results[label] = _stats(samples)
            results["load after"] = os.getloadavg()
    return results


def _load(averages: tuple[float, float, float]) -> str:
    return ", ".join(f"{a:.1f}" for a in averages)


def run() -> str:
    results = asyncio.run(_measure())
    load = [results.pop("load before"), results.pop("load after")]
    lines = [
        "# The dashboard over a million ledger entries",
        "",
        f"One vendor with {CUSTOMERS:,} customers and {ENTRIES:,} ledger entries over 365 days (70 % purchases",
        f"with their transactions, 20 % redemptions, 10 % expiries), folded by the ledger-totals fold, then {TAIL:,}",
        "entries more left unfolded (the tail every read adds). Signed in as the owner, "
        f"{REQUESTS} requests one after another after {WARM_UP} warm-up ones,",
        f"in process through the composed service (httpx ASGI transport); {machine()}; PostgreSQL 15 on 127.0.0.1.",
        "The machine is shared with other work running at the same time (two cores, other test suites):",
        f"load average (1, 5, 15 min) {_load(load[0])} before the requests and {_load(load[1])} after, so",
        "the figures are noisy and on the pessimistic side.",
        "",
        "| request | p50 ms | p95 ms | p99 ms |",
        "|---|---|---|---|",
    ]
    lines += [f"| {label} | {p50:.1f} | {p95:.1f} | {p99:.1f} |" for label, (p50, p95, p99) in results.items()]
    return "\n".join(lines) + "\n"
