"""Campaign mail through a local SMTP sink: messages per second and the sending worker's peak RSS.

``uv run just bench mailings [--recipients 20000]``

A scratch database migrated to head; one vendor with ``--recipients`` consenting customers (written
by one ``INSERT ... SELECT``), a mailing to them all started as ``send`` starts it; then the
``campaign-mails`` job runs in this process (one worker, batches of 200 over one SMTP connection)
against an aiosmtpd sink in a process of its own that discards what it takes. Recorded: the send's
wall time, messages per second, and this process's resident memory before and after (its peak).
Not measured here: the till's p99 during a send, and the audience count at a million customers.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import resource
import socket
import subprocess
import sys
import time

from bench._support import scratch_database, scratch_name

DATABASE = scratch_name("loyalty_bench_mailings")


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench mailings", description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipients", type=int, default=20_000)
    return parser.parse_args(argv)


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _measure(database_url: str, recipients: int, port: int) -> dict[str, float]:
    from sqlalchemy import text

    from loyalty_api.adapters.mail_sender import SmtpMailer
    from loyalty_api.jobs.campaign_mails import campaign_mails
    from loyalty_api.jobs.context import JobContext
    from loyalty_core.clock import SystemClock
    from loyalty_core.customers.rules.consent import unsubscribe_key
    from loyalty_core.db import make_engine, make_sessionmaker
    from loyalty_core.mailings.rules import Audience
    from loyalty_core.mailings.services import MailingService
    from loyalty_core.tenancy.models import Plan, Vendor

    engine = make_engine(database_url)
    sessionmaker = make_sessionmaker(engine)
    clock = SystemClock()
    async with sessionmaker.begin() as session:
        plan = Plan(name="bench", feature_campaign_mail=True)
        session.add(plan)
        await session.flush()
        vendor = Vendor(name="Bench Bakery", plan_id=plan.id)
        session.add(vendor)
        await session.flush()
        await session.execute(
            text(
                "INSERT INTO customers (id, vendor_id, first_name, email, locale, status, marketing_consent,"
                " created_at, updated_at) SELECT nextval('customers_id_seq'), :vendor, 'Fan ' || n,"
                " 'fan' || n || '@bench.example', 'nl', 'active', true, now(), now() FROM generate_series(1, :n) n"
            ),
            {"vendor": vendor.id, "n": recipients},
        )
        mailings = MailingService(session, clock)
        made = await mailings.create(vendor.id, "Bench news", "Hello {first_name}, {balance} points.", Audience())
        began = time.monotonic()
        await mailings.send(vendor.id, made.mailing.id, None)
        started_s = time.monotonic() - began
    context = JobContext(
        sessionmaker=sessionmaker,
        clock=clock,
        mailer=SmtpMailer("127.0.0.1", port),
        mail_from="news@bench.example",
        unsubscribe_key=unsubscribe_key("bench-secret-of-32-bytes-or-more-000"),
        public_url="https://loyalty.example",
    )
    rss_before = _rss_mb()
    began = time.monotonic()
    result: dict[str, int] = {}
    while result.get("sent", 0) < recipients:
        done = await campaign_mails(context, budget=3600)
        result["sent"] = result.get("sent", 0) + done.get("sent", 0)
        if not done.get("sent"):
            break
    elapsed = time.monotonic() - began
    await engine.dispose()
    return {
        "start_s": started_s,
        "send_s": elapsed,
        "sent": result.get("sent", 0),
        "rss_before_mb": rss_before,
        "rss_peak_mb": _rss_mb(),
    }


def run(argv: list[str] | None = None) -> str:
    options = _options(argv or [])
    from loyalty_api.migrate import upgrade

    database_url = scratch_database(DATABASE)
    upgrade(database_url)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    sink = subprocess.Popen(
        [sys.executable, "-m", "aiosmtpd", "-n", "-l", f"127.0.0.1:{port}", "-c", "aiosmtpd.handlers.Sink"]
    )
    try:
        time.sleep(1.0)
        figures = asyncio.run(_measure(database_url, options.recipients, port))
    finally:
        sink.terminate()
        sink.wait(timeout=10)
    rate = figures["sent"] / figures["send_s"] if figures["send_s"] else 0.0
    load = os.getloadavg()
    return "\n".join(
        [
            "# Campaign mail through a local SMTP sink",
            "",
            f"Run {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC on {os.cpu_count()} cores (load {load[0]:.1f}),"
            " `uv run just bench mailings`.",
            "",
            "| recipients | audience fixed (s) | send (s) | messages/s | RSS before (MB) | RSS peak (MB) |",
            "|---|---|---|---|---|---|",
            f"| {int(figures['sent'])} | {figures['start_s']:.2f} | {figures['send_s']:.1f} | {rate:.0f} |"
            f" {figures['rss_before_mb']:.0f} | {figures['rss_peak_mb']:.0f} |",
            "",
            "One worker (this process) sends in batches of 200 over one SMTP connection; the sink (aiosmtpd's",
            "`Sink` handler) runs in a process of its own on the same machine. The till's p99 during a send",
            "and the audience count at a million customers are not measured by this benchmark yet.",
            "",
        ]
    )
