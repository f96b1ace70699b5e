"""Registered pass devices at the till, and the ``pass-updates`` job's pushes to a local push service.

``LOYALTY_BENCH_OWN_POSTGRES=1 uv run just bench pass-pushes [--duration 10 --warmup 3 --connections 16
--rounds 2 --workers 2 --customers 200 --devices 3 --pushes 10000 --parts devices,pushes]``

On the bench's own cluster (``bench._cluster``: ``pg_stat_statements`` preloaded) ``loyalty serve``
(its jobs left to an external worker, ``LOYALTY_WORKER=external``, so that no push runs during the
till's runs) migrates a fresh database; one vendor registers twice ``--customers`` customers through
the API and gets ``bench.earning``'s terms. For half of them a phone downloads the platform_a pass
(``GET /api/v1/customers/{id}/wallet-pass``) and registers ``--devices`` devices through the pass
web service (``POST /passes/platform_a/v1/devices/{device}/registrations/{type}/{serial}``, each
answered 201).

``devices``: the purchase (``bench/wrk/earning.lua``) for the customers without devices and for
those with them, the order alternating over the rounds, one server; ``bench._variants`` records each
run's rate, latencies, server CPU and what PostgreSQL did.

``pushes``: every customer's pass downloaded, and registrations added in bulk SQL (a pass's ``id``
with device and push token of the bench's own) until there are ``--pushes``, each told of other
content than its pass shows. The ``pass-updates`` job then runs in this process, its runs one after
another until one pushes nothing, with the service's own push sender (``PlatformPushes``: HTTP/2,
one kept TLS connection per identity, the shop's pass identity presented; loopback allowed as in
test mode) against ``bench._h2_sink`` in a process of its own. The identity is one the bench issues
(``CertificateAuthority``), not the shop's sealed one, which only the service can open.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import io
import json
import os
import ssl
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

import httpx
import psycopg

from bench import _load, _pgstats, _servers, _variants, earning
from bench._support import scratch_name
from bench.request_path import preamble
from loyalty_wallet_pass.authority import CertificateAuthority
from loyalty_wallet_pass.identity import SigningIdentity

DATABASE = scratch_name("loyalty_bench_pass_pushes")
WEB = "/passes/platform_a/v1"
SINK_HOST = "push.bench.example"
CALL = "transaction"


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench pass-pushes", description=__doc__.split("\n\n")[0])
    _variants.add_options(parser)
    parser.set_defaults(customers=200)
    parser.add_argument("--devices", type=int, default=3, help="devices registered per customer with devices")
    parser.add_argument("--pushes", type=int, default=10_000, help="registrations due a push for the job")
    parser.add_argument("--parts", default="devices,pushes", help="comma-separated: devices, pushes")
    options = parser.parse_args(argv)
    options.parts = [part for part in options.parts.split(",") if part]
    if not options.parts or not set(options.parts) <= {"devices", "pushes"}:
        parser.error("--parts takes devices, pushes or both")
    return options


async def _passes(url: str, shop: _servers.Seeded, customers: list[tuple[int, str]], devices: int) -> None:
    """Each customer's platform_a pass downloaded and ``devices`` devices registered for it."""
    headers = {"Authorization": f"Bearer {shop.token}"}
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        gate = asyncio.Semaphore(8)

        async def one(customer_id: int) -> None:
            async with gate:
                got = await client.get(
                    f"/api/v1/customers/{customer_id}/wallet-pass", params={"platform": "platform_a"}, headers=headers
                )
                if got.status_code != 200:
                    raise RuntimeError(f"wallet-pass {customer_id}: {got.status_code} {got.text}")
                described: dict[str, Any] = json.loads(zipfile.ZipFile(io.BytesIO(got.content)).read("pass.json"))
                kind, serial = described["passTypeIdentifier"], described["serialNumber"]
                auth = {"Authorization": f"ApplePass {described['authenticationToken']}"}
                for n in range(devices):
                    device = f"bench-device-{customer_id}-{n}"
                    made = await client.post(
                        f"{WEB}/devices/{device}/registrations/{kind}/{serial}",
                        json={"pushToken": f"push-{device}"},
                        headers=auth,
                    )
                    if made.status_code != 201:
                        raise RuntimeError(f"register {device}: {made.status_code} {made.text}")

        await asyncio.gather(*(one(customer_id) for customer_id, _card in customers))


_MORE_REGISTRATIONS = """
INSERT INTO pass_registrations (vendor_id, pass_id, device_id, push_token, known_fingerprint, attempts,
                                created_at, updated_at)
SELECT p.vendor_id, p.id, 'bench-bulk-' || p.id || '-' || n, 'push-bulk-' || p.id || '-' || n, 'bench-stale', 0,
       now(), now()
  FROM (SELECT vendor_id, id, row_number() OVER (ORDER BY id) AS k, count(*) OVER () AS passes FROM wallet_passes) p,
       generate_series(1, %(each)s) n
 WHERE (n - 1) * p.passes + p.k <= %(more)s
"""


def _due(url: str, pushes: int) -> tuple[int, int, str]:
    """Registrations up to ``pushes``, every one told of other content than its pass shows: the
    passes, the registrations and the pass type."""
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM wallet_passes) AS passes, (SELECT count(*) FROM pass_registrations) AS made,"
            " (SELECT min(pass_type_identifier) FROM wallet_passes) AS kind"
        ).fetchone()
        assert row is not None
        passes, made, kind = int(str(row[0])), int(str(row[1])), str(row[2])
        more = max(pushes - made, 0)
        conn.execute(_MORE_REGISTRATIONS, {"each": -(-more // max(passes, 1)), "more": more})
        conn.execute(
            "UPDATE pass_registrations SET known_fingerprint = 'bench-stale', attempts = 0, next_attempt_at = NULL,"
            " gave_up_fingerprint = NULL"
        )
        total = conn.execute("SELECT count(*) AS due FROM pass_registrations").fetchone()
        assert total is not None
    return passes, int(str(total[0])), kind


async def _run_job(
    database_url: str, identity: SigningIdentity, folder: Path, port: int
) -> tuple[float, list[dict[str, int]]]:
    """The ``pass-updates`` job's runs, one after another until one pushes nothing: the seconds of
    the runs that pushed, and every run's result."""
    from loyalty_api.adapters.pass_pushes import PlatformPushes
    from loyalty_api.jobs.context import JobContext
    from loyalty_api.jobs.pass_updates import pass_updates
    from loyalty_core.clock import SystemClock
    from loyalty_core.db import make_engine, make_sessionmaker

    trust = (folder / "sink.pem").read_text()

    async def identity_of(vendor_id: int) -> SigningIdentity:
        return identity

    async def loopback(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    pushes = PlatformPushes(
        identity_of,
        loopback,
        push_url=f"https://{SINK_HOST}:{port}",
        test_mode=True,  # the address check's loopback permission, as the tests' receivers need
        verify=lambda: ssl.create_default_context(cadata=trust),
    )
    engine = make_engine(database_url)
    context = JobContext(sessionmaker=make_sessionmaker(engine), clock=SystemClock(), wallet_pushes=pushes)
    results: list[dict[str, int]] = []
    seconds = 0.0
    try:
        while True:
            began = time.monotonic()
            result = await pass_updates(context)
            results.append(result)
            if not result["pushed"] and not result["failed"]:
                break
            seconds += time.monotonic() - began
    finally:
        await pushes.aclose()
        await engine.dispose()
    return seconds, results


def _start_sink(folder: Path) -> tuple[subprocess.Popen[bytes], int]:
    authority_root = folder / "client-root.pem"
    if not authority_root.exists():
        raise RuntimeError("the client root is written before the sink starts")
    sink = subprocess.Popen([sys.executable, "-m", "bench._h2_sink", str(folder), SINK_HOST])
    deadline = time.monotonic() + 60
    while not (folder / "port").exists():
        if sink.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("the HTTP/2 sink did not start")
        time.sleep(0.2)
    return sink, int((folder / "port").read_text())


def _pushes_part(
    options: argparse.Namespace, database_url: str, service: Any, shop: _servers.Seeded, bare: list[tuple[int, str]]
) -> list[str]:
    plain = database_url.replace("postgresql+psycopg://", "postgresql://", 1)
    load_before = os.getloadavg()
    first = service()
    try:
        print(f"bench: the passes of {len(bare)} more customers", flush=True)
        asyncio.run(_passes(first.url, shop, bare, 0))
    finally:
        first.stop()
    passes, due, kind = _due(plain, options.pushes)
    folder = Path(tempfile.mkdtemp(prefix="bench-h2-sink-"))
    # the client root first: the sink asks for a certificate under it
    authority = CertificateAuthority.create()
    (folder / "client-root.pem").write_bytes(authority.root_pem())
    sink, port = _start_sink(folder)
    try:
        print(f"bench: the pass-updates job pushes to {due:,} registrations of {passes:,} passes", flush=True)
        seconds, results = asyncio.run(_run_job(database_url, authority.issue(kind), folder, port))
    finally:
        sink.terminate()
        sink.wait(timeout=30)
    answered = int((folder / "answered").read_text()) if (folder / "answered").exists() else -1
    pushed = sum(r["pushed"] for r in results)
    failed = sum(r["failed"] for r in results)
    load_after = os.getloadavg()
    rate = pushed / seconds if seconds else 0.0
    return [
        "## The pass-updates job's pushes to a local HTTP/2 push service",
        "",
        f"Load average (1, 5, 15 min) before this part: {', '.join(f'{x:.2f}' for x in load_before)}; after:"
        f" {', '.join(f'{x:.2f}' for x in load_after)}.",
        "",
        f"{passes:,} passes (every customer's, downloaded through the API), {due:,} registrations each due a push"
        " (bulk SQL beyond those registered through the web service; every one's `known_fingerprint` set to"
        " other content). The job's runs in this process, one after another until one pushes nothing; the sink"
        " (`bench/_h2_sink.py`, h2 over TLS, asks for the client certificate) in a process of its own.",
        "",
        "| registrations due | job runs | pushed | failed | sink answered | seconds (runs that pushed) | pushes/s |",
        "|---|---|---|---|---|---|---|",
        f"| {due:,} | {len(results)} | {pushed:,} | {failed:,} | {answered:,} | {seconds:.1f} | {rate:,.0f} |",
        "",
        "Each run: " + "; ".join(", ".join(f"{k} {v}" for k, v in r.items()) for r in results) + ".",
        "",
        f"Target: all {due:,} sent in under 60 s: {seconds:.1f} s,"
        f" {'met' if seconds < 60 and pushed >= due else 'MISSED'}.",
        "",
    ]


def _devices_part(options: argparse.Namespace, runs: list[_variants.Run], names: list[str]) -> list[str]:
    mix, _ = _variants.statement_mix(runs, CALL, names)
    m = {name: _variants.medians(runs, CALL, name) for name in names}
    none, some = names
    cpu = m[some]["server_ms"] / m[none]["server_ms"] - 1
    rate = m[some]["rate"] / m[none]["rate"] - 1
    ok = abs(cpu) <= 0.05 and abs(rate) <= 0.05
    return [
        "## The purchase for customers with and without pass devices",
        "",
        *_variants.table(runs, [CALL], names),
        "",
        f"Target: within 5% of each other: server CPU per request {100 * cpu:+.1f}%, req/s {100 * rate:+.1f}%,"
        f" statements/req {m[none]['statements']:.2f} and {m[some]['statements']:.2f}, rows written/req"
        f" {m[none]['rows']:.2f} and {m[some]['rows']:.2f}: {'met' if ok else 'MISSED'}.",
        "",
        "### Rows written per request by table (pg_stat_user_tables, all rounds)",
        "",
        *_variants.rows_by_table(runs, CALL, names),
        "",
        "### Statements sent per request (pg_stat_statements, top level, all rounds; under 0.02/req left out)",
        "",
        *mix,
        "",
    ]


def run(argv: list[str] | None = None) -> str:
    options = _options(argv or [])
    bench = _load.Bench(options, DATABASE, "pass-pushes")
    if "devices" in options.parts:  # the pushes part alone reads no statements' statistics
        _pgstats.ensure_extension(bench.plain)
    database_url, plain, work = bench.database_url, bench.plain, bench.work
    service = functools.partial(bench.service, settings={"LOYALTY_WORKER": "external"})

    first = service()
    try:
        print(f"bench: {2 * options.customers} customers, {options.devices} devices for half of them", flush=True)
        shop = _servers.seed(first, 2 * options.customers, {"features": {"campaigns": True}})
        earning._terms(first, shop.vendor_id)
        bare, with_devices = shop.customers[: options.customers], shop.customers[options.customers :]
        asyncio.run(_passes(first.url, shop, with_devices, options.devices))
    finally:
        first.stop()
    _servers.settle_statistics(database_url, analyse=True)
    names = ["0 devices", f"{options.devices} devices"]
    parts: list[str] = []
    if "devices" in options.parts:
        variants = [
            _variants.Variant(
                names[0],
                _servers.write_customers([_servers.Seeded(shop.vendor_id, shop.token, bare)], work / "bare.txt"),
                shop.token,
            ),
            _variants.Variant(
                names[1],
                _servers.write_customers(
                    [_servers.Seeded(shop.vendor_id, shop.token, with_devices)], work / "devices.txt"
                ),
                shop.token,
            ),
        ]
        runs = _variants.rounds(options, service, DATABASE, plain, [CALL], variants)
        parts += _devices_part(options, runs, names)
    if "pushes" in options.parts:
        parts += _pushes_part(options, database_url, service, shop, bare)
    command = " ".join(["LOYALTY_BENCH_OWN_POSTGRES=1 uv run just bench pass-pushes", *(argv or [])])
    lines = [
        *preamble(
            "Pass devices at the till, and the pass-updates job's pushes",
            command,
            bench.started,
            bench.load_before,
            os.getloadavg(),
        ),
        "",
        f"Setup: the bench's own PostgreSQL 15 cluster (`bench/_cluster.py`, pg_stat_statements preloaded);"
        f" `loyalty serve --workers {options.workers}` (granian, uvloop, test mode off, log level WARNING, no"
        " Redis, `LOYALTY_WORKER=external`: no job in its processes); one vendor with"
        f" {2 * options.customers:,} customers registered through the API and `bench.earning`'s earn rule and two"
        f" campaigns; for {options.customers:,} of them the platform_a pass downloaded and {options.devices}"
        " devices registered through the pass web service. Then `VACUUM ANALYZE`. The till's runs: wrk"
        f" `-t{_load.THREADS} -c{options.connections} -d{options.duration:g}s` after {options.warmup:g} s of"
        f" warm-up; {options.rounds} rounds, the two halves of the customers alternating on one server.",
        "",
        f"Calls: {CALL} = {_variants.CALLS[CALL]}.",
        "",
        *parts,
    ]
    return "\n".join(lines) + "\n"
