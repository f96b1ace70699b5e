"""Added latency of authentication + rate limiting per request (issue: tenancy and access).

Two routes answer the same constant: one with no auth and no limiter, one behind the vendor
token check (JWT decode, limiter, one database query). Both are driven in process through ASGI,
sequentially, so the difference is what auth + limiter add to a request.
"""

from __future__ import annotations

import asyncio
import time

from bench._support import bench_app, machine, new_vendor, percentiles, scratch_database

REQUESTS = 2000


async def _measure(redis_url: str | None) -> dict[str, tuple[float, float]]:
    import httpx
    from litestar import Controller, get

    from loyalty_core.db import make_engine
    from loyalty_core.models import metadata
    from loyalty_http.route_options import reads

    class Bench(Controller):
        path = "/api/v1/bench"

        @get("/bare", opt=reads(auth="none"))
        async def bare(self) -> dict[str, int]:
            return {"ok": 1}

        @get("/authed", opt=reads(auth="vendor"))
        async def authed(self) -> dict[str, int]:
            return {"ok": 1}

    engine = make_engine(scratch_database("loyalty_bench_auth"))
    async with engine.begin() as conn:
        await conn.run_sync(metadata.create_all)
    app = bench_app(engine, redis_url=redis_url, route_handlers=[Bench])
    results: dict[str, tuple[float, float]] = {}
    async with app.lifespan():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            _, headers = await new_vendor(client)
            for name, path, hdrs in (
                ("bare", "/api/v1/bench/bare", {}),
                ("auth + limiter", "/api/v1/bench/authed", headers),
            ):
                for _ in range(200):
                    await client.get(path, headers=hdrs)
                samples = []
                for _ in range(REQUESTS):
                    t = time.perf_counter()
                    response = await client.get(path, headers=hdrs)
                    samples.append((time.perf_counter() - t) * 1000)
                    assert response.status_code == 200, response.text
                results[name] = percentiles(samples)
    await engine.dispose()
    return results


def run() -> str:
    lines = [
        "# Auth + rate limiter latency",
        "",
        f"{REQUESTS} sequential in-process requests per route after 200 warm-up; {machine()};",
        "PostgreSQL on 127.0.0.1. Median and p99 in milliseconds.",
        "",
        "| limiter store | route | median ms | p99 ms |",
        "|---|---|---|---|",
    ]
    for store, url in (("process memory", None), ("Redis", "redis://127.0.0.1:6379/14")):
        res = asyncio.run(_measure(url))
        for route, (median, p99) in res.items():
            lines.append(f"| {store} | {route} | {median:.3f} | {p99:.3f} |")
        added = res["auth + limiter"][0] - res["bare"][0]
        lines.append(f"| {store} | **added by auth + limiter** | **{added:.3f}** | |")
    return "\n".join(lines) + "\n"
