"""Wallet-pass build time through the endpoint under load.

``uv run just bench passes [--duration 10 --connections 16 --rounds 2 --warmup 3 --workers 2
--customers 200]``

On a fresh database ``loyalty serve`` (granian, uvloop, test mode off) migrates the schema; one
vendor registers ``--customers`` customers (each with a card) through the public API; the local
wallet-platform stand-in issues the shop's signing identity at its creation. wrk then asks
``GET /api/v1/customers/{id}/wallet-pass`` for a random customer, ``platform_a`` (a signed
``.pkpass``) and ``platform_b`` (a save link, a signed JWT) in turn. Recorded: throughput, median and
p99 of each. The shop's signing key and certificates are loaded once per process and shop (cached
by the identity's version), so a request pays only the pass's own build and signature.
"""

from __future__ import annotations

import argparse
import os
import statistics
from pathlib import Path

import psycopg

from bench import _load, _servers
from bench._support import SERVER, scratch_name
from bench.request_path import preamble

DATABASE = scratch_name("loyalty_bench_passes")
LUA = Path(__file__).parent / "wrk" / "passes.lua"
PLATFORMS = ("platform_a", "platform_b")


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench passes", description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=10, help="seconds of measured load per run")
    parser.add_argument("--connections", type=int, default=16, help="wrk connections")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--warmup", type=float, default=3, help="seconds of unmeasured load before each run")
    parser.add_argument("--workers", type=int, default=2, help="server processes")
    parser.add_argument("--customers", type=int, default=200)
    return parser.parse_args(argv)


def run(argv: list[str] | None = None) -> str:
    options = _options(argv or [])
    bench = _load.Bench(options, DATABASE, "passes")
    started, load_before, work = bench.started, bench.load_before, bench.work
    service = bench.service()
    runs: dict[str, list[_load.Measured]] = {p: [] for p in PLATFORMS}
    try:
        print(f"bench: registering {options.customers} customers through the API", flush=True)
        seeded = _servers.seed(service, options.customers)
        customers = work / "customers.txt"
        customers.write_text("".join(f"{cid} {card}\n" for cid, card in seeded.customers))
        head, _, query = SERVER.partition("?")
        url = f"{head.rsplit('/', 1)[0]}/{DATABASE}" + (f"?{query}" if query else "")
        with psycopg.connect(url, autocommit=True) as stats:
            for round_no in range(options.rounds):
                for name in PLATFORMS:
                    print(f"bench: round {round_no + 1}, {name}", flush=True)
                    prefix = f"r{round_no}-{name}"
                    _load.wrk(
                        service.url,
                        name,
                        customers,
                        seeded.token,
                        prefix,
                        options.warmup,
                        options.connections,
                        script=LUA,
                    )
                    runs[name].append(
                        _load.measure(
                            service.url,
                            service.process.pid,
                            stats,
                            DATABASE,
                            name,
                            customers,
                            seeded.token,
                            prefix,
                            options.duration,
                            options.connections,
                            script=LUA,
                        )
                    )
    finally:
        service.stop()
    load_after = os.getloadavg()
    command = " ".join(["uv run just bench passes", *(argv or [])])
    lines = [
        *preamble("Wallet passes through the endpoint under load", command, started, load_before, load_after),
        "",
        f"Setup: `loyalty serve --workers {options.workers}` (granian, uvloop, test mode off, log level WARNING),"
        f" {options.customers:,} customers with a card, the shop's identity issued by the local stand-in at the"
        f" vendor's creation. wrk `-t{_load.THREADS} -c{options.connections} -d{options.duration:g}s` after a"
        f" {options.warmup:g} s warm-up; a random customer per request; {options.rounds} round(s).",
        "",
        "| platform | answer | req/s | median ms | p99 ms | server CPU ms/req | errors |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, answer in zip(PLATFORMS, ("signed `.pkpass` file", "JSON save link (signed JWT)"), strict=True):
        got = runs[name]
        rate = statistics.median(m.wrk.rate for m in got)
        errors = sum(sum(m.wrk.errors.values()) for m in got)
        lines.append(
            f"| {name} | {answer} | {rate:,.0f} | {statistics.median(m.wrk.p50_ms for m in got):.1f}"
            f" | {statistics.median(m.wrk.p99_ms for m in got):.1f}"
            f" | {statistics.median(10 * m.server_cpu / m.wrk.rate for m in got):.2f} | {errors} |"
        )
    return "\n".join(lines) + "\n"
