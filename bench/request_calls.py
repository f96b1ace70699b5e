"""The Python a till read runs per request, counted: the service against the raw app, in process.

``uv run python -m bench request_calls [--requests 300]``

On a shared 2-core machine the CPU time of a request moves with whatever else runs; the number of
Python functions and C functions a request calls does not. The service's app (as ``loyalty serve``
builds it: test mode off, log level WARNING, rate limiter in process memory) and the raw app
(``bench._raw_app``) answer the card lookup and the verify of a fresh code through raw ASGI calls,
one at a time, with ``sys.setprofile`` counting the calls; the user and system CPU per request of
the same run are reported beside them (they include the profiler's own cost and the background's).
The process's background work (the in-process job worker's polls) is counted over a few idle
seconds first and taken out at that rate over the run's wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bench._servers import ADMIN_TOKEN, UNLIMITED_RATE, service_settings
from bench._support import scratch_database, scratch_name

Call = Callable[[], Awaitable[int]]


def _scope(method: str, path: str, query: bytes, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "root_path": "",
        "headers": [(b"host", b"bench"), *headers],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }


async def _call(app: Any, scope: dict[str, Any]) -> int:
    status = 0

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(scope, receive, send)
    return status


async def _seed(app: Any, url: str) -> tuple[str, list[str], list[str], int]:
    """A vendor's token, 50 customers' cards and codes for every verify (copies of 50 redemptions)."""
    import httpx
    import psycopg

    from bench.redemptions import COPY

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench") as client:

        async def made(path: str, body: object, headers: dict[str, str]) -> Any:
            response = await client.post(path, json=body, headers=headers)
            if response.status_code not in (200, 201):
                raise RuntimeError(f"POST {path}: {response.status_code} {response.text}")
            return response.json().get("data", response.json())

        admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        plan = await made("/admin/v1/plans", {"name": "b", "rate_limit_per_minute": UNLIMITED_RATE}, admin)
        vendor = await made("/admin/v1/vendors", {"name": "b", "plan_id": plan["id"]}, admin)
        pair = await made(f"/admin/v1/vendors/{vendor['id']}/clients", {"name": "b"}, admin)
        grant = {
            "grant_type": "client_credentials",
            "client_id": pair["client_id"],
            "client_secret": pair["client_secret"],
        }
        token = (await made("/oauth/token", grant, {}))["access_token"]
        headers = {"Authorization": f"Bearer {token}"}
        customers = [await made("/api/v1/customers", {"first_name": f"F{n}"}, headers) for n in range(50)]
        reward = {"type": "free_product", "name": "Coffee", "point_cost": 10, "product_reference": "C"}
        reward_id = (await made(f"/admin/v1/vendors/{vendor['id']}/rewards", reward, admin))["id"]
        for n, customer in enumerate(customers):
            adjust = {"amount": 1_000_000, "reason": "bench", "idempotency_key": f"a{n}"}
            await made(f"/api/v1/customers/{customer['id']}/wallet/adjust", adjust, headers)
            redeem = {"identifier": customer["loyalty_card_code"], "reward_id": reward_id, "idempotency_key": f"r{n}"}
            await made("/api/v1/redemptions", redeem, headers)
    async with await psycopg.AsyncConnection.connect(url.replace("+psycopg", ""), autocommit=True) as conn:
        await conn.execute(COPY, {"first": 1, "last": 10_000})
        await conn.execute("VACUUM ANALYZE")
        rows = await (await conn.execute("SELECT confirmation_code FROM redemptions WHERE status = 'valid'")).fetchall()
    return token, [c["loyalty_card_code"] for c in customers], [str(r[0]) for r in rows], int(vendor["id"])


IDLE_SECONDS = 3.0


async def _count(call: Call, requests: int) -> tuple[float, float, float, float]:
    """(Python calls, C calls, user CPU ms, system CPU ms) per request. The process's background
    calls (counted over ``IDLE_SECONDS`` with no request) are taken out at their rate per second."""
    for _ in range(50):
        await call()
    counts = {"call": 0, "c_call": 0}

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event in counts:
            counts[event] += 1

    sys.setprofile(profile)
    await asyncio.sleep(IDLE_SECONDS)
    sys.setprofile(None)
    idle = {k: v / IDLE_SECONDS for k, v in counts.items()}
    counts = {"call": 0, "c_call": 0}
    before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    sys.setprofile(profile)
    for _ in range(requests):
        await call()
    sys.setprofile(None)
    after, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter() - started
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    python, c = (max(0.0, counts[k] - idle[k] * wall) / requests for k in ("call", "c_call"))
    return python, c, 1000 * user / requests, 1000 * system / requests


async def _measure(requests: int) -> dict[tuple[str, str], tuple[float, float, float, float]]:
    url = scratch_database(scratch_name("loyalty_bench_request_calls"))
    os.environ.update(service_settings(url))
    os.environ.pop("REDIS_URL", None)
    from loyalty_api import preflight
    from loyalty_api.app import app_from_env

    preflight.migrate_database(url)
    service = app_from_env()
    found: dict[tuple[str, str], tuple[float, float, float, float]] = {}
    async with service.lifespan():
        token, cards, codes, vendor = await _seed(service, url)
        os.environ.update(
            BENCH_RAW_DATABASE_URL=url.replace("postgresql+psycopg://", "postgresql://"),
            BENCH_RAW_VENDOR_ID=str(vendor),
            BENCH_RAW_POOL="2",
        )
        from bench import _raw_app

        await _raw_app.pool.open(wait=True)
        auth = [(b"authorization", f"Bearer {token}".encode())]
        pick, left = random.Random(1), iter(codes)
        for name, app in (("service", service), ("raw", _raw_app.app)):

            async def lookup(app: Any = app) -> int:
                query = f"identifier={pick.choice(cards)}".encode()
                return await _call(app, _scope("GET", "/api/v1/customers/lookup", query, auth))

            async def verify(app: Any = app) -> int:
                return await _call(app, _scope("POST", f"/api/v1/redemptions/{next(left)}/verify", b"", auth))

            for call_name, call in (("lookup", lookup), ("verify", verify)):
                if await call() != 200:
                    raise RuntimeError(f"{name} {call_name} did not answer 200")
                found[(call_name, name)] = await _count(call, requests)
        await _raw_app.pool.close()
    return found


def run(argv: list[str] | None = None) -> str:
    import datetime as dt

    from bench.request_path import preamble

    parser = argparse.ArgumentParser(prog="bench request-calls", description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300)
    options = parser.parse_args(argv or [])
    started, load_before = dt.datetime.now(dt.UTC), os.getloadavg()
    t0 = time.perf_counter()
    found = asyncio.run(_measure(options.requests))
    command = " ".join(["uv run python -m bench request_calls", *(argv or [])])
    lines = preamble("Python calls per till read, service and raw", command, started, load_before, os.getloadavg())
    lines += ["", f"{options.requests} requests per row, one at a time, in {time.perf_counter() - t0:.0f} s.", ""]
    lines += ["| call | app | Python calls/req | C calls/req | user CPU ms/req | system CPU ms/req |"]
    lines += ["|---|---|---|---|---|---|"]
    for (call, app), (py, c, user, system) in found.items():
        lines.append(f"| {call} | {app} | {py:.0f} | {c:.0f} | {user:.2f} | {system:.2f} |")
    return "\n".join(lines) + "\n"
