"""Campaign mail through a local SMTP sink: messages per second, the sending worker's peak RSS, and
the till's latency while a send runs.

``uv run just bench mailings [--recipients 20000 --parts send,till --till-customers 2000 --duration 15
--warmup 3 --rounds 2 --connections 16 --workers 2 --profile]``

``send``: a scratch database migrated to head; one vendor with ``--recipients`` consenting customers
(written by one ``INSERT ... SELECT``), a mailing to them all started as ``send`` starts it; then the
``campaign-mails`` job runs in this process (one worker, batches of 200 over one SMTP connection)
against an aiosmtpd sink in a process of its own that discards what it takes. Recorded: the send's
wall time, messages per second, and this process's resident memory before and after (its peak).

``till``: ``loyalty serve`` (its jobs left to an external worker, ``LOYALTY_WORKER=external``) on a
fresh database; one shop made through the admin API (an earn rule, a reward) with
``--till-customers`` customers in bulk SQL (``bench.mix``'s, each with points to redeem) and, beside
them, ``--recipients`` consenting customers and a mailing to them started. wrk sends the till's mix
(``bench/wrk/mix.lua``: purchases, lookups, reward lists, redemptions and their verifies) with no
send running ("quiet") and while the job sends the mailing from a process of its own, an external
worker ("sending"), the order alternating over the rounds. The sender is paused (SIGSTOP) outside the
sending runs and resumed (SIGCONT) for each, so one mailing serves every round. With ``--parts till``
alone, the send figures of the report already in bench/results are kept.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psycopg

from bench import _load, _profile, _servers, mix, results_dir
from bench._support import scratch_database, scratch_name
from bench.request_path import preamble

DATABASE = scratch_name("loyalty_bench_mailings")
TILL_DATABASE = scratch_name("loyalty_bench_mailings_till")
TILL_HEADING = "## The till during a send"
QUIET, SENDING = "quiet", "sending"

_RECIPIENTS = (
    "INSERT INTO customers (id, vendor_id, first_name, email, locale, status, marketing_consent,"
    " created_at, updated_at) SELECT nextval('customers_id_seq'), :vendor, 'Fan ' || n,"
    " 'fan' || n || '@bench.example', 'nl', 'active', true, now(), now() FROM generate_series(1, :n) n"
)


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench mailings", description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipients", type=int, default=20_000)
    parser.add_argument("--parts", default="send,till", help="comma-separated: send, till")
    parser.add_argument("--till-customers", type=int, default=2000, help="the till's customers (not mailed)")
    parser.add_argument("--duration", type=float, default=15, help="seconds of measured till load per run")
    parser.add_argument("--warmup", type=float, default=3, help="seconds of unmeasured till load before each run")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each of quiet and sending, alternating")
    parser.add_argument("--connections", type=int, default=16, help="wrk connections")
    parser.add_argument("--workers", type=int, default=2, help="server processes")
    parser.add_argument("--profile", action="store_true", help="py-spy the sender during the first sending run")
    options = parser.parse_args(argv)
    options.parts = [part for part in options.parts.split(",") if part]
    if not options.parts or not set(options.parts) <= {"send", "till"}:
        parser.error("--parts takes send, till or both")
    return options


def _cpu_s() -> float:
    """This process's CPU seconds so far (user + system)."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _start_mailing(database_url: str, recipients: int, vendor_id: int | None = None) -> tuple[int, float]:
    """``recipients`` consenting customers of ``vendor_id`` (else of a new vendor on a plan with
    campaign mail) and a mailing to them all, started; answers the vendor's id and the seconds the
    start took."""
    from sqlalchemy import text

    from loyalty_core.clock import SystemClock
    from loyalty_core.db import make_engine, make_sessionmaker
    from loyalty_core.mailings.rules import Audience
    from loyalty_core.mailings.services import MailingService
    from loyalty_core.tenancy.models import Plan, Vendor

    engine = make_engine(database_url)
    try:
        async with make_sessionmaker(engine).begin() as session:
            if vendor_id is None:
                plan = Plan(name="bench", feature_campaign_mail=True)
                session.add(plan)
                await session.flush()
                vendor = Vendor(name="Bench Bakery", plan_id=plan.id)
                session.add(vendor)
                await session.flush()
                vendor_id = vendor.id
            await session.execute(text(_RECIPIENTS), {"vendor": vendor_id, "n": recipients})
            mailings = MailingService(session, SystemClock())
            made = await mailings.create(vendor_id, "Bench news", "Hello {first_name}, {balance} points.", Audience())
            began = time.monotonic()
            await mailings.send(vendor_id, made.mailing.id, None)
            return vendor_id, time.monotonic() - began
    finally:
        await engine.dispose()


async def _send(database_url: str, recipients: int, port: int) -> int:
    """The ``campaign-mails`` job, run until ``recipients`` are sent or a run sends none."""
    from loyalty_api.adapters.mail_sender import SmtpMailer
    from loyalty_api.jobs.campaign_mails import campaign_mails
    from loyalty_api.jobs.context import JobContext
    from loyalty_core.clock import SystemClock
    from loyalty_core.customers.rules.consent import unsubscribe_key
    from loyalty_core.db import make_engine, make_sessionmaker

    engine = make_engine(database_url)
    context = JobContext(
        sessionmaker=make_sessionmaker(engine),
        clock=SystemClock(),
        mailer=SmtpMailer("127.0.0.1", port),
        mail_from="news@bench.example",
        unsubscribe_key=unsubscribe_key("bench-secret-of-32-bytes-or-more-000"),
        public_url="https://loyalty.example",
    )
    sent = 0
    try:
        while sent < recipients:
            done = await campaign_mails(context, budget=3600)
            print(f"bench: campaign-mails run: {done}", flush=True)
            sent += done.get("sent", 0)
            if not done.get("sent"):
                break
    finally:
        await engine.dispose()
    return sent


def _sink() -> tuple[subprocess.Popen[bytes], int]:
    """aiosmtpd's ``Sink`` (it discards what it takes) in a process of its own, and its port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    sink = subprocess.Popen(
        [sys.executable, "-m", "aiosmtpd", "-n", "-l", f"127.0.0.1:{port}", "-c", "aiosmtpd.handlers.Sink"]
    )
    time.sleep(1.0)
    return sink, port


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGCONT)  # a paused process takes no SIGTERM until it runs again
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _send_part(options: argparse.Namespace, argv: list[str]) -> list[str]:
    from loyalty_api.migrate import upgrade

    database_url = scratch_database(DATABASE)
    upgrade(database_url)
    load_before = os.getloadavg()
    sink, port = _sink()
    try:
        _vendor, start_s = asyncio.run(_start_mailing(database_url, options.recipients))
        rss_before = _rss_mb()
        cpu_before, sink_before = _cpu_s(), _ticks([sink.pid])
        began = time.monotonic()
        sent = asyncio.run(_send(database_url, options.recipients, port))
        send_s = time.monotonic() - began
        sender_ms = 1000 * (_cpu_s() - cpu_before) / max(sent, 1)
        sink_ms = 1000 * (_ticks([sink.pid]) - sink_before) / _load.TICK / max(sent, 1)
    finally:
        _stop(sink)
    rate = sent / send_s if send_s else 0.0
    load = os.getloadavg()
    return [
        f"Run {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC on {os.cpu_count()} cores (nproc; load {load[0]:.1f};"
        f" load average before {', '.join(f'{x:.2f}' for x in load_before)}, after"
        f" {', '.join(f'{x:.2f}' for x in load)}), `{' '.join(['uv run just bench mailings', *argv])}`"
        " (its send part).",
        "",
        "| recipients | audience fixed (s) | send (s) | messages/s | sender CPU ms/message | sink CPU ms/message"
        " | RSS before (MB) | RSS peak (MB) |",
        "|---|---|---|---|---|---|---|---|",
        f"| {sent} | {start_s:.2f} | {send_s:.1f} | {rate:.0f} | {sender_ms:.2f} | {sink_ms:.2f}"
        f" | {rss_before:.0f} | {_rss_mb():.0f} |",
        "",
        "One worker (this process) sends in batches of 200 over one SMTP connection; the sink (aiosmtpd's",
        "`Sink` handler) runs in a process of its own on the same machine. CPU per message is user plus",
        "system time over the send (the sender's includes its PostgreSQL client work, not the server's),",
        "which a loaded machine changes less than it changes wall time. The audience count at a",
        "million customers is not measured by this benchmark yet.",
        "",
    ]


Sample = tuple[_load.Measured, float, float]
"""A till run, the messages sent a second meanwhile, and the CPU of the sender and the sink (% of one core)."""


def _ticks(pids: list[int]) -> int:
    """CPU ticks (user + system) of ``pids`` so far; a process gone counts none."""
    return sum(_load._ticks(pid) or 0 for pid in pids)


def _sent(conn: psycopg.Connection[tuple[object, ...]], vendor_id: int) -> int:
    row = conn.execute(
        "SELECT count(*) AS sent FROM mailing_recipients WHERE vendor_id = %s AND state = 'sent'", (vendor_id,)
    ).fetchone()
    return int(str(row[0])) if row else 0


def _sender(database_url: str, port: int, work: Path) -> subprocess.Popen[bytes]:
    """The external worker of the sending runs: ``python -m bench.mailings send``, its output in
    ``work/sender.log``."""
    argv = [sys.executable, "-m", "bench.mailings", "send", database_url, str(port)]
    with (work / "sender.log").open("wb") as log:
        return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)


def _sending(
    sender: subprocess.Popen[bytes], stats: psycopg.Connection[tuple[object, ...]], vendor_id: int, work: Path
) -> None:
    """Wait until the sender has sent its first messages (its start, imports and all, is no part of a run)."""
    deadline = time.monotonic() + 120
    while not _sent(stats, vendor_id):
        if sender.poll() is not None or time.monotonic() > deadline:
            mailings = stats.execute("SELECT id, status, scheduled_for, started_at FROM mailings").fetchall()
            states = stats.execute(
                "SELECT state, count(*) AS n, min(next_attempt_at) AS next FROM mailing_recipients GROUP BY state"
            ).fetchall()
            log = (work / "sender.log").read_text()[-4000:]
            raise RuntimeError(f"the sender sent nothing: mailings {mailings}, recipients {states}:\n{log}")
        time.sleep(0.2)


def _till_part(options: argparse.Namespace, argv: list[str]) -> list[str]:
    bench = _load.Bench(options, TILL_DATABASE, "mailings")
    started, load_before, work = bench.started, bench.load_before, bench.work
    database_url, plain = bench.database_url, bench.plain
    service = bench.service(settings={"LOYALTY_WORKER": "external"})
    sink, port = _sink()
    sender: subprocess.Popen[bytes] | None = None
    runs: dict[str, list[Sample]] = {QUIET: [], SENDING: []}
    order: list[tuple[int, str, _load.Measured, float, float]] = []
    profile: list[str] = []
    """The sender's stacks file, once recorded (``--profile``)."""
    try:
        shop = _servers.seed(service, 0, {"features": {"campaign_mail": True}})
        vendor_id, token, reward = asyncio.run(mix._terms(service.url, [shop]))[0]
        customers, shops = work / "customers.txt", work / "shops.txt"
        print(f"bench: {options.till_customers} till customers, {options.recipients} recipients", flush=True)
        # the mailing first: its audience is the recipients alone, not the till's customers (who have
        # no consent; a run whose batch of 200 is all skipped ends there, so they would slow the send)
        asyncio.run(_start_mailing(database_url, options.recipients, vendor_id))
        mix._seed_customers(database_url, [vendor_id], options.till_customers, customers)
        shops.write_text(f"{vendor_id} {token} {reward}\n")
        _servers.settle_statistics(database_url, analyse=True)
        with psycopg.connect(plain, autocommit=True) as stats:
            for round_no in range(options.rounds):
                for name in _load.order(round_no, (QUIET, SENDING)):
                    print(f"bench: round {round_no + 1}, {name}", flush=True)
                    if name == SENDING:
                        if sender is None:
                            sender = _sender(database_url, port, work)
                            _sending(sender, stats, vendor_id, work)
                        else:
                            sender.send_signal(signal.SIGCONT)
                    prefix = f"r{round_no}-{name}"
                    args = (service.url, "mix", customers, str(shops))
                    if options.warmup > 0:
                        _load.wrk(*args, prefix + "-w", options.warmup, options.connections, script=mix.LUA)
                    before = _sent(stats, vendor_id)
                    helpers = [sink.pid, *([sender.pid] if name == SENDING and sender is not None else [])]
                    ticks_before, began = _ticks(helpers), time.monotonic()
                    recording = None
                    if options.profile and name == SENDING and sender is not None and not profile:
                        profile = [str(results_dir() / "mailings-sender.collapsed.txt")]
                        recording = _profile.record(sender.pid, options.duration, Path(profile[0]))
                    measured = _load.measure(
                        *args[:1],
                        service.process.pid,
                        stats,
                        TILL_DATABASE,
                        "mix",
                        customers,
                        str(shops),
                        prefix,
                        options.duration,
                        options.connections,
                        script=mix.LUA,
                    )
                    window = time.monotonic() - began
                    if recording is not None:
                        _profile.finish(recording, options.duration)
                    rate = (_sent(stats, vendor_id) - before) / window
                    helpers_cpu = 100 * (_ticks(helpers) - ticks_before) / _load.TICK / window
                    if name == SENDING and sender is not None:
                        sender.send_signal(signal.SIGSTOP)
                    runs[name].append((measured, rate, helpers_cpu))
                    order.append((round_no, name, measured, rate, helpers_cpu))
            total_sent = _sent(stats, vendor_id)
    finally:
        if sender is not None:
            _stop(sender)
        _stop(sink)
        service.stop()
    lines = _till_report(options, argv, started, load_before, runs, order, total_sent)
    if profile:
        out = Path(profile[0])
        title = "the campaign-mails sender during the first sending run"
        lines += [
            "### Where the sender's time goes (py-spy)",
            "",
            *_profile.markdown(title, _profile.summarise(out), _profile.shown(out)),
        ]
    return lines


def _till_report(
    options: argparse.Namespace,
    argv: list[str],
    started: dt.datetime,
    load_before: tuple[float, float, float],
    runs: dict[str, list[Sample]],
    order: list[tuple[int, str, _load.Measured, float, float]],
    total_sent: int,
) -> list[str]:
    def med(name: str, pick: Callable[[Sample], float]) -> float:
        return statistics.median(pick(sample) for sample in runs[name])

    p99 = {name: med(name, lambda s: s[0].wrk.p99_ms) for name in (QUIET, SENDING)}
    ratio = p99[SENDING] / p99[QUIET]
    command = " ".join(["uv run just bench mailings", *argv])
    lines = [
        TILL_HEADING,
        "",
        *preamble("", command, started, load_before, os.getloadavg())[2:],
        "",
        f"Setup: `loyalty serve --workers {options.workers}` (granian, uvloop, test mode off, log level WARNING,"
        " `LOYALTY_WORKER=external`: no job in its processes); one shop (plan with `campaign_mail`, an earn rule,"
        f" a reward) with {options.till_customers:,} till customers in bulk SQL (`bench.mix`'s) and"
        f" {options.recipients:,} consenting customers, one mailing to them started before the rounds. While"
        " sending, the `campaign-mails` job runs in a process of its own (an external worker: batches of 200"
        " over one SMTP connection to aiosmtpd's `Sink` in another process), paused between the sending runs."
        f" wrk `-t{_load.THREADS} -c{options.connections} -d{options.duration:g}s` with `bench/wrk/mix.lua`"
        f" (70% purchases, 15% lookups, 10% reward lists, 5% redemptions and their verifies) after"
        f" {options.warmup:g} s of warm-up; {options.rounds} rounds, quiet and sending alternating. Server CPU is"
        " the service's processes only (the sender's is not in it).",
        "",
        "| configuration | req/s | p50 ms | p99 ms | server CPU % | server CPU ms/req | PG CPU % | PG CPU ms/req"
        " | sender + sink CPU % | messages sent/s | errors |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in (QUIET, SENDING):
        errors = sum(sum(s[0].wrk.errors.values()) for s in runs[name])
        lines.append(
            f"| {name} | {med(name, lambda s: s[0].wrk.rate):,.0f} | {med(name, lambda s: s[0].wrk.p50_ms):.1f}"
            f" | {p99[name]:.1f} | {med(name, lambda s: s[0].server_cpu):.0f}"
            f" | {med(name, lambda s: 10 * s[0].server_cpu / s[0].wrk.rate):.2f}"
            f" | {med(name, lambda s: s[0].database_cpu):.0f}"
            f" | {med(name, lambda s: 10 * s[0].database_cpu / s[0].wrk.rate):.2f}"
            f" | {med(name, lambda s: s[2]):.0f} | {med(name, lambda s: s[1]):.0f} | {errors} |"
        )
    lines += ["", "Every run, in the order run (load1: the 1-minute load average as the run began):", ""]
    lines += [
        "| round | configuration | req/s | p50 ms | p99 ms | sender + sink CPU % | messages sent/s | load1 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for round_no, name, m, rate, helpers_cpu in order:
        lines.append(
            f"| {round_no + 1} | {name} | {m.wrk.rate:,.0f} | {m.wrk.p50_ms:.1f} | {m.wrk.p99_ms:.1f}"
            f" | {helpers_cpu:.0f} | {rate:.0f} | {m.load1:.2f} |"
        )
    lines += [
        "",
        f"Messages sent over all the sending runs: {total_sent:,} of {options.recipients:,}.",
        "",
        f"Target: the till's p99 during a send within 1.5x of its p99 without: {ratio:.2f}x,"
        f" {'met' if ratio <= 1.5 else 'MISSED'}.",
        "",
    ]
    return lines


def _kept_send_figures() -> list[str]:
    """The send figures of the report already recorded (its lines before the till's section)."""
    recorded = results_dir() / "mailings.md"
    if not recorded.exists():
        return ["(no send figures recorded: run with `--parts send`)", ""]
    text = recorded.read_text().split(TILL_HEADING)[0].rstrip("\n").splitlines()
    return [*text[2:], ""]  # below the title


def run(argv: list[str] | None = None) -> str:
    options = _options(argv or [])
    send = _send_part(options, argv or []) if "send" in options.parts else _kept_send_figures()
    till = _till_part(options, argv or []) if "till" in options.parts else []
    return "\n".join(["# Campaign mail through a local SMTP sink", "", *send, *till])


if __name__ == "__main__":
    # the sending runs' external worker: python -m bench.mailings send <database URL> <SMTP port>
    if sys.argv[1:2] != ["send"] or len(sys.argv) != 4:
        raise SystemExit("usage: python -m bench.mailings send DATABASE_URL SMTP_PORT")
    from loyalty_api.logs import configure_logging

    configure_logging("WARNING")
    asyncio.run(_send(sys.argv[2], 10**9, int(sys.argv[3])))
