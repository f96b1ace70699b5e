"""``bench scale``'s measurements on the cloned deployment, and its report.

The clone is served by ``loyalty serve`` (granian, as deployed) with the worker external, so no
scheduled job runs under the measured requests; each job is then run alone in a process of its own
(``bench._scale_job``) for its peak memory, while a lookup loop on the large vendor measures what the
job does to the till. ``auto_explain`` (loaded by the clone's sessions only) logs
``EXPLAIN (ANALYZE, BUFFERS)`` of every statement over 10 ms, which the report collects from the
server's log into ``bench/results/scale-explain.txt``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg
from psycopg import sql

from bench import results_dir
from bench._scale_calls import (
    ADMIN_READS,
    PORTAL,
    TILL,
    Shop,
    events_page,
    export,
    lookup,
    metrics,
    open_shop,
    ready,
    timed,
)
from bench._scale_shapes import logged
from bench._scale_sizes import Sizes
from bench._servers import start_service
from bench._support import machine

SLOW_MS = 10
LOG = Path(os.environ.get("LOYALTY_BENCH_PG_LOG", "/var/log/postgresql/postgresql-15-main.log"))
JOBS: list[tuple[str, str]] = [
    ("expire-points", "SELECT count(*) FROM point_lots WHERE remaining > 0 AND expires_at < now()"),
    ("customer-moments", "SELECT -count(*) FROM customer_moments"),
    ("ledger-totals", "SELECT -folded_through FROM ledger_totals_watermark"),
    ("prune-events", "SELECT count(*) FROM events"),
    ("prune-tokens", "SELECT count(*) FROM issued_tokens"),
]
"""Each job and a count that falls by the rows it handled."""


Row = tuple[str, str, tuple[float, float, float], tuple[float, float, float]]
"""A call's figures: its group (or part of a run), its label, and p50, p95 and p99 in ms at the large vendor
and at the small one."""


def _stats(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)

    def pick(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(len(ordered) * q))]

    return pick(0.5), pick(0.95), pick(0.99)


def _explain_on(conn: psycopg.Connection[Any], database: str) -> None:
    settings = {
        "session_preload_libraries": "auto_explain",
        "auto_explain.log_min_duration": f"{SLOW_MS}ms",
        "auto_explain.log_analyze": "on",
        "auto_explain.log_buffers": "on",
    }
    for name, value in settings.items():
        conn.execute(
            sql.SQL("ALTER DATABASE {} SET {} = {}").format(sql.Identifier(database), sql.SQL(name), sql.Literal(value))
        )


def _slow_plans(offset: int, database: str) -> list[tuple[float, str]]:
    """The plans auto_explain logged for ``database`` since ``offset``: (ms, text), the slowest of
    each statement."""
    plans: dict[str, tuple[float, str]] = {}
    for ms, body in logged(LOG, database, offset):
        plan = "\n".join(body)
        # the whole statement and its top node (all before the first cost): statements that begin
        # alike (``SELECT count(*) ...`` of every audience) are kept apart
        query = re.sub(r"\$\d+|\d+", "?", plan.split("(cost=", 1)[0])
        if query not in plans or plans[query][0] < ms:
            plans[query] = (ms, plan)
    return sorted(plans.values(), reverse=True)


def _job(name: str, url: str, db: psycopg.Connection[Any], count: str, shop: Shop, client: httpx.Client,
         limit_s: int) -> dict[str, Any]:  # fmt: skip
    before = int((db.execute(count).fetchone() or (0,))[0])
    samples: list[float] = []
    done = threading.Event()

    def till() -> None:
        n = 0
        while not done.is_set():
            began = time.perf_counter()
            lookup(client, shop, n)
            samples.append((time.perf_counter() - began) * 1000)
            n += 1

    loop = threading.Thread(target=till)
    loop.start()
    began = time.perf_counter()
    try:
        out = subprocess.run(
            [sys.executable, "-m", "bench._scale_job", name, url.replace("postgresql://", "postgresql+psycopg://", 1)],
            capture_output=True, text=True, timeout=limit_s,
        )  # fmt: skip
        answer = (
            json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else {"error": out.stderr[-800:]}
        )
    except subprocess.TimeoutExpired:
        answer = {"error": f"stopped after {limit_s} s"}
    seconds = time.perf_counter() - began
    done.set()
    loop.join()
    after = int((db.execute(count).fetchone() or (0,))[0])
    rows = before - after
    # the job's own time when it finished; a process on this machine takes seconds to import the service
    seconds = float(answer.get("seconds", seconds))
    return {"job": name, "seconds": seconds, "rows": rows, "answer": answer, "till": _stats(samples or [0.0])}


def measure(
    url: str,
    sizes: Sizes,
    options: argparse.Namespace,
    *,
    template: str,
    clone_s: float,
    build_s: float,
    migrated_s: float | None = None,
) -> str:
    database = url.rsplit("/", 1)[1].split("?")[0]
    db = psycopg.connect(url, autocommit=True)
    _explain_on(db, database)
    offset = LOG.stat().st_size if LOG.exists() else 0
    os.environ["LOYALTY_WORKER"] = "external"
    load_before = os.getloadavg()
    figures: list[Row] = []
    extra: list[str] = []
    jobs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as logs:
        service = start_service(url.replace("postgresql://", "postgresql+psycopg://", 1), options.workers, Path(logs))
        try:
            with httpx.Client(base_url=service.url, timeout=600) as client:
                run = str(int(time.time()))
                large = open_shop(client, service.url, "large", 1, db, run)
                small = open_shop(client, service.url, "small", 2, db, run)
                events = int((db.execute("SELECT count(*) FROM events WHERE vendor_id = 1").fetchone() or (0,))[0])
                deep = max(1, min(10_000, events // 100))
                calls = [*TILL, *ADMIN_READS, *PORTAL, events_page(1), events_page(deep), metrics, ready]
                calls = [call for call in calls if call.__name__ not in options.leave_out]
                for call in calls:
                    label, at_scale = timed(call, client, large, options.requests)
                    _, on_small = timed(call, client, small, options.requests)
                    figures.append((group_of(call), label, _stats(at_scale), _stats(on_small)))
                    print(f"scale: {label}: {figures[-1][2]} vs {figures[-1][3]}", flush=True)
                for shop in (large, small):
                    first, whole, size, rows = export(shop)
                    rate = rows / whole
                    extra.append(
                        f"| {shop.label} | {rows:,} | {first:.0f} | {whole:.1f} | {rate:,.0f} | {size / 1e6:.1f} |"
                    )
                _prepare_jobs(db)
                for name, count in [] if options.skip_jobs else JOBS:
                    jobs.append(_job(name, url, db, count, large, client, options.job_limit))
                    print(f"scale: job {jobs[-1]}", flush=True)
                    if name == "ledger-totals":
                        jobs.append(_job(name, url, db, count, large, client, options.job_limit))
        finally:
            service.stop()
    plans = _slow_plans(offset, database)
    (results_dir() / "scale-explain.txt").write_text(
        "".join(f"-- {ms:.1f} ms\n{plan}\n\n" for ms, plan in plans) or "no statement took 10 ms or more\n"
    )
    db.close()
    report = _report(sizes, template, clone_s, build_s, figures, extra, jobs, len(plans), load_before, os.getloadavg())
    if options.leave_out:
        report = report.replace("\n\n", f"\n\nLeft out (`--leave-out`): {', '.join(options.leave_out)}.\n\n", 1)
    if migrated_s is not None:
        report = report.replace(
            "\n\n", f"\n\nThe template's schema was older: its clone migrated in {migrated_s:.0f} s.\n\n", 1
        )
    return report


def group_of(call: Any) -> str:
    if call in TILL:
        return "till"
    if call in ADMIN_READS:
        return "admin"
    if call in PORTAL:
        return "portal"
    return "other"


def _prepare_jobs(db: psycopg.Connection[Any]) -> None:
    """Work for the jobs that the generated year leaves none for: the large vendor's anniversary
    and win-back campaigns (``customer-moments``), and 100,000 expired tokens (``prune-tokens``)."""
    db.execute(
        "INSERT INTO campaigns (vendor_id, name, family, moment, kind, points, inactive_days, combinable,"
        " min_transaction_amount, active, version, created_at, updated_at) VALUES"
        " (1, 'Anniversary', 'customer_moment', 'anniversary', 'fixed_points', 50, NULL, true, 0, true, 1,"
        " now(), now()), (1, 'Come back', 'customer_moment', 'win_back', 'fixed_points', 25, 30, true, 0, true, 1,"
        " now(), now())"
    )
    db.execute("UPDATE vendors SET earning_version = earning_version + 1 WHERE id = 1")
    db.execute(
        "INSERT INTO issued_tokens (jti, api_client_id, expires_at, revoked, created_at, updated_at)"
        " SELECT 'scale-' || g, (SELECT min(id) FROM api_clients), now() - interval '2 days', false,"
        " now() - interval '3 days', now() - interval '3 days' FROM generate_series(1, 100000) g"
    )


def large_against_small(first: str, rows: list[Row]) -> list[str]:
    """The table of ``rows``, each call's times at both vendors and their p50 ratio; ``first`` heads
    the column of each row's group."""
    lines = [
        f"| {first} | call | large p50 | p95 | p99 | small p50 | p95 | p99 | p50 ratio |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for group, label, big, little in rows:
        ratio = big[0] / little[0] if little[0] else 0
        lines.append(
            f"| {group} | {label} | {big[0]:.1f} | {big[1]:.1f} | {big[2]:.1f} | {little[0]:.1f} | {little[1]:.1f}"
            f" | {little[2]:.1f} | {ratio:.2f} |"
        )
    return lines


def _report(sizes: Sizes, template: str, clone_s: float, build_s: float, figures: list[Any], extra: list[str],
            jobs: list[dict[str, Any]], plans: int, load_before: Any, load_after: Any) -> str:  # fmt: skip
    lines = [
        "# Scale: every path on a year of data",
        "",
        f"Template `{template}` ({sizes}), ready in {build_s:.0f} s (built, or found from an earlier run);",
        f"cloned in {clone_s:.1f} s. {machine()}; PostgreSQL 15 on 127.0.0.1, shared with other work: load average",
        f"{', '.join(f'{a:.1f}' for a in load_before)} before, {', '.join(f'{a:.1f}' for a in load_after)} after.",
        f"Requests one after another through granian (`loyalty serve`), {plans} statements of 10 ms or more",
        "recorded with EXPLAIN (ANALYZE, BUFFERS) in `scale-explain.txt` (auto_explain, timing on for every",
        "statement of the clone, at both vendors alike).",
        "",
        *large_against_small("group", figures),
    ]
    lines += ["", "| export of customers | rows | first byte ms | whole s | rows/s | MB |", "|---|---|---|---|---|---|"]
    lines += extra
    lines += [
        "",
        "| job | seconds | rows | rows/s | peak RSS MB | lookup p50 / p99 ms during | answer |",
        "|---|---|---|---|---|---|---|",
    ]
    for job in jobs:
        answer = job["answer"]
        rss = answer.get("peak_rss_mb")
        lines.append(
            f"| {job['job']} | {job['seconds']:.1f} | {job['rows']:,} | {job['rows'] / job['seconds']:,.0f}"
            f" | {'' if rss is None else f'{rss:.0f}'} | {job['till'][0]:.1f} / {job['till'][2]:.1f}"
            f" | {json.dumps(answer.get('answer', answer.get('error')))[:200]} |"
        )
    return "\n".join(lines) + "\n"
