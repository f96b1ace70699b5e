"""The two servers of the request-path benchmark and the data they serve.

``loyalty serve`` runs exactly as deployed (granian, uvloop, test mode off) on a fresh database it
migrates itself; the vendor, its client and the customers are then made through the service's own
admin and public API, so each customer has what registration gives it: a wallet and a loyalty card.
The raw app (``bench._raw_app``) is served by granian beside it, with the same worker count and loop.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg

ADMIN_TOKEN = "bench-admin-token-" + "a" * 32  # the service refuses secrets under 32 bytes
UNLIMITED_RATE = 10_000_000


@dataclass
class Server:
    name: str
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@dataclass(frozen=True)
class Seeded:
    vendor_id: int
    token: str
    customers: list[tuple[int, str]]
    """(customer id, loyalty card code) of every customer made."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_ready(server: Server, path: str, deadline_s: float = 180) -> None:
    # a machine shared with other work (load average 8 and more) may take over a minute to start one
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"{server.name} exited at start:\n{server.log.read_text()[-4000:]}")
        try:
            # any HTTP answer means the server listens and its lifespan has started
            httpx.get(server.url + path, timeout=2)
            return
        except httpx.TransportError:
            time.sleep(0.3)
    raise RuntimeError(f"{server.name} did not answer within {deadline_s:.0f} s:\n{server.log.read_text()[-4000:]}")


def _spawn(name: str, argv: list[str], env: dict[str, str], port: int, ready_path: str, logs: Path) -> Server:
    log = logs / f"{name}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
    server = Server(name, f"http://127.0.0.1:{port}", process, log)
    try:
        _wait_ready(server, ready_path)
    except BaseException:
        server.stop()
        raise
    return server


def service_settings(database_url: str) -> dict[str, str]:
    """The service's environment in every benchmark: test mode off, the limits out of the way."""
    return {
        "DATABASE_URL": database_url,
        "LOYALTY_ADMIN_TOKEN": ADMIN_TOKEN,
        "LOYALTY_JWT_SECRET": "bench-jwt-secret-" + "x" * 32,
        "LOYALTY_TEST_MODE": "0",
        "LOYALTY_MAX_RATE_PER_MINUTE": str(UNLIMITED_RATE),
        # the token requests of many shops come from one address
        "LOYALTY_ANON_RATE_PER_MINUTE": str(UNLIMITED_RATE),
        "LOYALTY_TOKEN_TTL_SECONDS": "86400",
        # no access line per request in the measured figures, as the other benchmarks
        "LOYALTY_LOG_LEVEL": "WARNING",
    }


def start_service(
    database_url: str,
    workers: int,
    logs: Path,
    redis_url: str | None = None,
    settings: dict[str, str] | None = None,
) -> Server:
    """``loyalty serve`` as deployed; the limits out of the way of the load (docs/deployment.md).
    With ``redis_url`` the processes share the rate limiter's counts through Redis; ``settings``
    adds to (or overrides) its environment, e.g. ``LOYALTY_WORKER=external``: no job runs in it."""
    port = free_port()
    env = {
        **os.environ,
        **service_settings(database_url),
        "LOYALTY_PORT": str(port),
        "LOYALTY_HOME": str(logs / "home"),
    }
    env.pop("REDIS_URL", None)
    if redis_url:
        env["REDIS_URL"] = redis_url
    env.update(settings or {})
    argv = [sys.executable, "-m", "loyalty_api.cli", "serve", "--workers", str(workers)]
    return _spawn("service", argv, env, port, "/health/live", logs)


def start_raw(database_url: str, vendor_id: int, workers: int, pool: int, logs: Path) -> Server:
    port = free_port()
    env = {
        **os.environ,
        "BENCH_RAW_DATABASE_URL": database_url.replace("postgresql+psycopg://", "postgresql://", 1),
        "BENCH_RAW_VENDOR_ID": str(vendor_id),
        "BENCH_RAW_POOL": str(pool),
    }
    argv = [
        sys.executable,
        "-m",
        "granian",
        "--interface",
        "asgi",
        "--loop",
        "uvloop",
        "--workers",
        str(workers),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-access-log",
        "bench._raw_app:app",
    ]
    return _spawn("raw", argv, env, port, "/", logs)


ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


async def post(client: httpx.AsyncClient, path: str, body: object, headers: dict[str, str]) -> dict[str, object]:
    """POST ``body``; the answer's ``data`` (or the whole answer), anything but 200 or 201 an error."""
    response = await client.post(path, json=body, headers=headers)
    if response.status_code not in (200, 201):
        raise RuntimeError(f"POST {path}: {response.status_code} {response.text}")
    data: dict[str, object] = response.json().get("data", response.json())
    return data


async def _seed(
    url: str, customers: int, plan_fields: dict[str, object] | None = None, vendors: int = 1, branch: bool = False
) -> list[Seeded]:
    admin = ADMIN
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        gate = asyncio.Semaphore(8)

        async def made(path: str, body: object, headers: dict[str, str]) -> dict[str, object]:
            async with gate:
                return await post(client, path, body, headers)

        plan_body = {"name": f"bench-{secrets.token_hex(3)}", "rate_limit_per_minute": UNLIMITED_RATE}
        plan = await made("/admin/v1/plans", {**plan_body, **(plan_fields or {})}, admin)

        async def vendor(n: int) -> tuple[int, str]:
            made_vendor = await made("/admin/v1/vendors", {"name": f"bench {n}", "plan_id": plan["id"]}, admin)
            vendor_id = int(str(made_vendor["id"]))
            client: dict[str, object] = {"name": "bench"}
            if branch:
                # a till's client stands in one shop: each of its writes names that branch
                shop = {"external_id": "shop-1", "name": "Shop 1"}
                await made(f"/admin/v1/vendors/{vendor_id}/branches", shop, admin)
                client["default_branch"] = "shop-1"
            pair = await made(f"/admin/v1/vendors/{vendor_id}/clients", client, admin)
            grant = {
                "grant_type": "client_credentials",
                "client_id": pair["client_id"],
                "client_secret": pair["client_secret"],
            }
            return vendor_id, str((await made("/oauth/token", grant, {}))["access_token"])

        shops = sorted(await asyncio.gather(*(vendor(n) for n in range(vendors))))
        queue: asyncio.Queue[int] = asyncio.Queue()
        for n in range(customers):
            queue.put_nowait(n)
        made_customers: list[list[tuple[int, str]]] = [[] for _ in shops]

        async def register() -> None:
            while not queue.empty():
                n = queue.get_nowait()
                shop = n % len(shops)  # customers dealt round the vendors: each has its share
                body = {"first_name": f"First {n}", "last_name": f"Last {n}", "email": f"customer.{n}@bench.example"}
                headers = {"Authorization": f"Bearer {shops[shop][1]}"}
                customer = await made("/api/v1/customers", body, headers)
                made_customers[shop].append((int(str(customer["id"])), str(customer["loyalty_card_code"])))

        await asyncio.gather(*(register() for _ in range(8)))
    return [Seeded(v, token, sorted(mine)) for (v, token), mine in zip(shops, made_customers, strict=True)]


def seed(
    service: Server, customers: int, plan_fields: dict[str, object] | None = None, *, branch: bool = False
) -> Seeded:
    """One vendor on a plan of its own (``plan_fields`` adds to it) with ``customers`` customers;
    with ``branch``, its client's default branch is a shop of its own, as a till's client is."""
    return asyncio.run(_seed(service.url, customers, plan_fields, branch=branch))[0]


def seed_vendors(
    service: Server, vendors: int, customers: int, plan_fields: dict[str, object] | None = None
) -> list[Seeded]:
    """``vendors`` vendors on one plan of their own, ``customers`` customers dealt out among them."""
    return asyncio.run(_seed(service.url, customers, plan_fields, vendors))


def write_customers(shops: list[Seeded], out: Path) -> Path:
    """The wrk scripts' customers file: ``<id> <card>`` lines for one vendor (whose token the script
    is given), ``<id> <card> <vendor id> <token>`` lines for several (bench/wrk/earning.lua)."""
    if len(shops) == 1:
        out.write_text("".join(f"{cid} {card}\n" for cid, card in shops[0].customers))
    else:
        out.write_text("".join(f"{cid} {card} {s.vendor_id} {s.token}\n" for s in shops for cid, card in s.customers))
    return out


def settle_statistics(database_url: str, *, analyse: bool) -> None:
    """Fresh statistics for every table (the steady state), or none at all and no autovacuum to
    bring them mid-run (the state right after a vendor registered its customers)."""
    url = database_url.replace("postgresql+psycopg://", "postgresql://", 1)
    with psycopg.connect(url, autocommit=True) as conn:
        if analyse:
            conn.execute("VACUUM ANALYZE")
            return
        for table in ("customers", "customer_identifiers", "wallets", "ledger_entries", "point_lots"):
            conn.execute(f"ALTER TABLE {table} SET (autovacuum_enabled = off)")
