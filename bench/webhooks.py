"""Webhook events delivered per second by one worker to a local HTTP receiver.

``uv run just bench webhooks [--events 500 --rounds 2]``

On a fresh database (the schema from the models), one vendor with one endpoint listening to every
type, pointing at a receiver in a process of its own on 127.0.0.1 that answers every POST with 204.
Each round records ``--events`` events through ``record_event`` (each with its pending delivery, as
the money paths write them), then times one call of the delivery job (``webhook_deliveries``, with
its default bounds when the tree has them), in process: per event it claims the delivery, reads the
event, signs the body, POSTs it on a new connection (the sender keeps none alive, so a connection is
never reused for another host name) and records the outcome. ``--delay-ms``: the receiver answers
that much later, as one across a network would. Recorded: events delivered per second and the
worker process's CPU per event, per round.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import socket
import statistics
import subprocess
import sys
import time

from bench._support import scratch_database, scratch_name
from bench.request_path import preamble

# the receiver: asyncio streams, HTTP/1.1, reads the body and answers 204 after the given delay (a
# receiver across a network, doing its own work); the sender closes the connection
_RECEIVER = """
import asyncio, sys

async def handle(reader, writer):
    try:
        head = await reader.readuntil(b"\\r\\n\\r\\n")
        length = 0
        for line in head.split(b"\\r\\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        await reader.readexactly(length)
        await asyncio.sleep(DELAY)
        writer.write(b"HTTP/1.1 204 No Content\\r\\nConnection: close\\r\\n\\r\\n")
        await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()

DELAY = int(sys.argv[2]) / 1000

async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", int(sys.argv[1]), backlog=512)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()

asyncio.run(main())
"""


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench webhooks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=500, help="events recorded and delivered per round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--delay-ms", type=int, default=0, help="the receiver waits this long before answering")
    return parser.parse_args(argv)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _measure(options: argparse.Namespace, port: int) -> list[tuple[int, float, float, dict[str, int]]]:
    from loyalty_api.adapters.webhook_sealer import WebhookSealer
    from loyalty_api.adapters.webhook_sender import Sender
    from loyalty_api.jobs.context import JobContext
    from loyalty_api.jobs.webhook_deliveries import webhook_deliveries
    from loyalty_core.clock import SystemClock
    from loyalty_core.db import make_engine, make_sessionmaker
    from loyalty_core.events.rules.addresses import system_resolver
    from loyalty_core.events.services.endpoints import WebhookEndpoints
    from loyalty_core.events.services.recording import record_event
    from loyalty_core.models import metadata
    from loyalty_core.tenancy.models import Plan, Vendor
    from loyalty_core.wallet.events import PointsAdjusted

    engine = make_engine(scratch_database(scratch_name("loyalty_bench_webhooks")), pool_size=10)
    async with engine.begin() as conn:
        await conn.run_sync(metadata.create_all)
    sessionmaker, clock = make_sessionmaker(engine), SystemClock()
    sealer = WebhookSealer("bench-webhooks-" + "k" * 32)
    sender = Sender(system_resolver, test_mode=True)
    async with sessionmaker.begin() as db:
        plan = Plan(name="bench")
        db.add(plan)
        await db.flush()
        vendor = Vendor(name="bench", plan_id=plan.id, status="active")
        db.add(vendor)
        await db.flush()
        vendor_id = vendor.id
        await WebhookEndpoints(db, clock, sealer, system_resolver, test_mode=True).create(
            vendor_id, url=f"http://127.0.0.1:{port}/hook", events=["*"], description="bench", enabled=True
        )
    ctx = JobContext(sessionmaker=sessionmaker, clock=clock, webhook_sealer=sealer, webhook_sender=sender)
    at = dt.datetime(2026, 11, 26, 10, tzinfo=dt.UTC)
    rounds = []
    try:
        for _ in range(options.rounds):
            async with sessionmaker.begin() as db:
                for n in range(options.events):
                    entry = PointsAdjusted(n, 1, "adjust", 10, 10, "bench", "api_client", "cl_bench", at)
                    await record_event(db, clock, vendor_id, entry)
            started, cpu = time.perf_counter(), time.process_time()
            outcomes = await webhook_deliveries(ctx, budget=600)
            took, cpu = time.perf_counter() - started, time.process_time() - cpu
            rounds.append((options.events, took, cpu, outcomes))
    finally:
        await sender.aclose()
        await engine.dispose()
    return rounds


def run(argv: list[str] | None = None) -> str:
    options = _options(argv or [])
    started = dt.datetime.now(dt.UTC)
    load_before = os.getloadavg()
    port = _free_port()
    receiver = subprocess.Popen(
        [sys.executable, "-c", _RECEIVER, str(port), str(options.delay_ms)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert receiver.stdout is not None
        assert receiver.stdout.readline().strip() == "ready"
        rounds = asyncio.run(_measure(options, port))
    finally:
        receiver.terminate()
        receiver.wait()
    load_after = os.getloadavg()
    command = " ".join(["uv run just bench webhooks", *(argv or [])])
    lines = [
        *preamble("Webhook deliveries per second, one worker", command, started, load_before, load_after),
        "",
        f"Setup: schema from the models, one vendor, one endpoint (`*`) on a local receiver process answering"
        f" 204 after {options.delay_ms} ms; per round {options.events:,} events recorded with their pending"
        f" deliveries, then one run of the delivery job (its default bounds) timed; {options.rounds} round(s).",
        "",
        "| round | events | seconds | events/s | worker CPU ms/event | outcomes |",
        "|---|---|---|---|---|---|",
    ]
    for n, (events, seconds, cpu, outcomes) in enumerate(rounds, 1):
        shown = ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()))
        lines.append(
            f"| {n} | {events:,} | {seconds:.2f} | {events / seconds:,.0f} | {cpu * 1000 / events:.2f} | {shown} |"
        )
    rates = [events / seconds for events, seconds, _, _ in rounds]
    lines += ["", f"Median: {statistics.median(rates):,.0f} events/s."]
    return "\n".join(lines) + "\n"
