"""Adjustments per second: on one wallet (every request waits for the
wallet's row lock) and spread over many wallets, through the whole HTTP stack in process."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from bench._support import bench_app, machine, new_vendor, scratch_database, scratch_name

REQUESTS = 1500
CONCURRENCY = 16


async def _measure() -> dict[str, float]:
    import httpx

    from loyalty_core.customers.models import Customer
    from loyalty_core.db import make_engine, make_sessionmaker
    from loyalty_core.models import metadata
    from loyalty_core.wallet.models import Wallet

    engine = make_engine(scratch_database(scratch_name("loyalty_bench_wallet")), pool_size=CONCURRENCY)
    async with engine.begin() as conn:
        await conn.run_sync(metadata.create_all)
    app = bench_app(engine)
    results: dict[str, float] = {}
    async with (
        app.lifespan(),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench") as client,
    ):
        vendor_id, headers = await new_vendor(client)
        customers = []
        async with make_sessionmaker(engine).begin() as db:
            for _ in range(REQUESTS):
                c = Customer(vendor_id=vendor_id, locale="nl", status="active")
                db.add(c)
                await db.flush()
                db.add(Wallet(vendor_id=vendor_id, customer_id=c.id, balance=0))
                customers.append(c.id)

        async def run(label: str, pick: Callable[[int], int]) -> None:
            queue: asyncio.Queue[int] = asyncio.Queue()
            for n in range(REQUESTS):
                queue.put_nowait(n)

            async def worker() -> None:
                while not queue.empty():
                    n = queue.get_nowait()
                    customer = pick(n)
                    r = await client.post(
                        f"/api/v1/customers/{customer}/wallet/adjust",
                        headers=headers,
                        json={"amount": 1, "reason": "bench", "idempotency_key": f"{label}-{n}"},
                    )
                    assert r.status_code == 201, r.text

            started = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
            results[label] = REQUESTS / (time.perf_counter() - started)

        await run("one wallet (contended)", lambda n: customers[0])
        await run("many wallets", lambda n: customers[n])
    await engine.dispose()
    return results


def run() -> str:
    res = asyncio.run(_measure())
    lines = [
        "# Wallet adjustments per second",
        "",
        f"{REQUESTS} `POST /customers/{{id}}/wallet/adjust` of +1 with distinct keys, {CONCURRENCY} at a time,",
        f"in process through the whole HTTP stack (auth, limiter, validation, one transaction); {machine()};",
        "PostgreSQL on 127.0.0.1.",
        "",
        "| case | adjustments/s |",
        "|---|---|",
    ]
    lines += [f"| {label} | {rate:.0f} |" for label, rate in res.items()]
    return "\n".join(lines) + "\n"
