"""Added latency of authentication + rate limiting per request (issues: tenancy and access; the
request path).

Two pairs of routes, driven in process through ASGI, sequentially, so the difference within a pair
is what auth + limiter add to a request:

- a constant answer with no auth and no limiter, and the same behind the vendor token check (JWT
  claims, limiter, the token check's own statement): the cost on a route whose handler needs no
  database;
- the till's card lookup as the service answers it (its read rides on the token check's statement:
  one round trip in all), and the same lookup statement answered by a route with no auth and no
  limiter: the cost on the till's calls.

Each figure is the median (and p99) of wall time per request, and the CPU time per request of the
process (``time.process_time``), which is what limits throughput.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

from bench._support import bench_app, machine, new_vendor, percentiles, scratch_database, scratch_name
from loyalty_http.customers.schemas import Customer
from loyalty_http.params import Reader
from loyalty_http.wire.envelope import Envelope

REQUESTS = 2000
WARMUP = 200

Figures = dict[str, tuple[float, float, float]]
"""route -> (median ms, p99 ms, CPU ms per request)."""


async def _measure(redis_url: str | None) -> Figures:
    import httpx
    import msgspec
    from litestar import Controller, get

    from loyalty_core.accounts.till_lookup import customer_found, lookup_read
    from loyalty_core.db import make_engine
    from loyalty_core.models import metadata
    from loyalty_core.till_sql import bound
    from loyalty_http.route_options import reads

    held: dict[str, int] = {}

    class Bench(Controller):
        path = "/api/v1/bench"

        @get("/bare", opt=reads(auth="none"))
        async def bare(self) -> dict[str, int]:
            return {"ok": 1}

        @get("/authed", opt=reads(auth="vendor"))
        async def authed(self) -> dict[str, int]:
            return {"ok": 1}

        @get("/bare-lookup", opt=reads(auth="none"))
        async def bare_lookup(self, reader: Reader) -> Envelope[Customer]:
            read = lookup_read(now=datetime.now(UTC), identifier=str(held["card"]))
            async with reader.cursor(row_factory=_dict_row()) as cursor:
                await cursor.execute(read.sql, {**bound(read.params), "vendor_id": held["vendor"]}, prepare=True)
                return Envelope(Customer.of(customer_found(await cursor.fetchone())))

    engine = make_engine(scratch_database(scratch_name("loyalty_bench_auth")))
    async with engine.begin() as conn:
        await conn.run_sync(metadata.create_all)
    app = bench_app(
        engine, redis_url=redis_url, redis_prefix=scratch_name("loyalty_bench_auth"), route_handlers=[Bench]
    )
    results: Figures = {}
    async with app.lifespan():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            vendor, headers = await new_vendor(client)
            made = await client.post("/api/v1/customers", json={"first_name": "Bench"}, headers=headers)
            card = made.json()["data"]["loyalty_card_code"]
            held.update(vendor=vendor, card=card)
            for name, path, hdrs in (
                ("bare", "/api/v1/bench/bare", {}),
                ("auth + limiter", "/api/v1/bench/authed", headers),
                ("lookup, no auth", f"/api/v1/bench/bare-lookup?identifier={card}", {}),
                ("lookup, auth + limiter", f"/api/v1/customers/lookup?identifier={card}", headers),
            ):
                for _ in range(WARMUP):
                    await client.get(path, headers=hdrs)
                samples = []
                cpu = time.process_time()
                for _ in range(REQUESTS):
                    t = time.perf_counter()
                    response = await client.get(path, headers=hdrs)
                    samples.append((time.perf_counter() - t) * 1000)
                    assert response.status_code == 200, response.text
                cpu_ms = (time.process_time() - cpu) * 1000 / REQUESTS
                results[name] = (*percentiles(samples), cpu_ms)
                if name.startswith("lookup"):
                    assert msgspec.json.decode(response.content)["data"]["loyalty_card_code"] == card
    await engine.dispose()
    return results


def _dict_row() -> Any:
    from psycopg.rows import dict_row

    return dict_row


PAIRS = (("bare", "auth + limiter"), ("lookup, no auth", "lookup, auth + limiter"))


def added(figures: Figures) -> list[tuple[str, float, float]]:
    """(pair, median ms added, CPU ms added) for each pair."""
    return [
        (with_auth, figures[with_auth][0] - figures[bare][0], figures[with_auth][2] - figures[bare][2])
        for bare, with_auth in PAIRS
    ]


def run() -> str:
    lines = [
        "# Auth + rate limiter latency",
        "",
        f"{REQUESTS} sequential in-process requests per route after {WARMUP} warm-up; {machine()};",
        "PostgreSQL on 127.0.0.1. Median and p99 in milliseconds of wall time; CPU: milliseconds of the",
        "process's CPU per request. The till's lookup with auth is the service's own route (its read rides",
        "on the token check); without auth, the same statement answered by a route with no token check.",
        "",
        "| limiter store | route | median ms | p99 ms | CPU ms |",
        "|---|---|---|---|---|",
    ]
    for store, url in (("process memory", None), ("Redis", "redis://127.0.0.1:6379/14")):
        res = asyncio.run(_measure(url))
        for route, (median, p99, cpu) in res.items():
            lines.append(f"| {store} | {route} | {median:.3f} | {p99:.3f} | {cpu:.3f} |")
        for route, median_added, cpu_added in added(res):
            lines.append(f"| {store} | **added: {route}** | **{median_added:.3f}** | | **{cpu_added:.3f}** |")
    return "\n".join(lines) + "\n"
