"""The admin and portal reads that missed 100 ms at a million customers, timed on a clone of the
scale template: ``python -m bench._scale_reads [size options] [--requests N] [--label L]``.

The template of these sizes is cloned, migrated to this schema one revision at a time when it is
older (each revision timed: the backfills' cost on a million customers), served by ``loyalty serve``,
and on the large vendor (1) and a small one (2) these are timed, ``--requests`` each after 4 warm-up
ones, one after another: the portal's dashboard, the admin and the portal search by three letters of
a name, and the events feed's page 4,000 (100 a page). The statements of 10 ms or more are read
back from ``auto_explain``. The figures go to ``bench/results/scale-reads-1m-<label>.md``; the clone is
dropped when the process exits.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psycopg

from bench import results_dir
from bench._scale_build import clone, ensure_template
from bench._scale_calls import PORTAL, Call, _admin_search, events_page, open_shop, timed
from bench._scale_measure import LOG, _explain_on, _slow_plans, _stats
from bench._scale_sizes import add_options, sizes_of
from bench._scale_verify import _migrate, _sa
from bench._servers import start_service
from bench._support import machine, scratch_name

DEEP_EVENTS_PAGE = 4_000


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench._scale_reads", description=(__doc__ or "").split("\n\n")[0])
    add_options(parser)
    parser.add_argument("--requests", type=int, default=30, help="requests per timed call (30)")
    parser.add_argument("--label", default="after", help="the results file's suffix (after)")
    return parser.parse_args(argv)


def _calls() -> list[Call]:
    dashboard, _, three_letters, *_ = PORTAL
    return [dashboard, _admin_search(lambda s: s.name_part, "part of a name, 3 letters"), three_letters,
            events_page(DEEP_EVENTS_PAGE)]  # fmt: skip


def _commit() -> str:
    found = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True)
    return found.stdout.strip() + (" with changes not committed" if dirty.stdout.strip() else "")


def run(options: argparse.Namespace) -> str:
    sizes = sizes_of(options)
    template, behind = ensure_template(sizes, print)
    database = scratch_name("loyalty_scale_reads")
    began = time.monotonic()
    url = clone(template, database)
    cloned = time.monotonic() - began
    load_migrate = os.getloadavg()
    steps = _migrate(url) if behind else []
    db = psycopg.connect(url, autocommit=True)
    _explain_on(db, database)
    os.environ["LOYALTY_WORKER"] = "external"
    rows: list[tuple[str, tuple[float, float, float], tuple[float, float, float], float]] = []
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as logs, httpx.Client(timeout=900) as client:
        service = start_service(_sa(url), 1, Path(logs))
        try:
            client.base_url = httpx.URL(service.url)
            run_id = str(int(time.time()))
            shops = [open_shop(client, service.url, label, v, db, run_id) for label, v in (("large", 1), ("small", 2))]
            start = LOG.stat().st_size if LOG.exists() else 0
            for call in _calls():
                label, large = timed(call, client, shops[0], options.requests, warm_up=4)
                _, small = timed(call, client, shops[1], options.requests, warm_up=4)
                rows.append((label, _stats(large), _stats(small), os.getloadavg()[0]))
                print(f"reads: {rows[-1]}", flush=True)
            time.sleep(1)
            plans = _slow_plans(start, database)
        finally:
            service.stop()
    db.close()
    load, now, at_migrate = (", ".join(f"{a:.1f}" for a in avg) for avg in (load_before, os.getloadavg(), load_migrate))
    lines = [
        f"### {options.label}: commit {_commit()}",
        "",
        f"Template `{template}`; cloned in {cloned:.0f} s. {machine()}; load average {load} before the",
        f"requests, {now} at the end. {options.requests} requests a call after 4 warm-up ones (ms).",
        "",
    ]
    if steps:
        lines += [f"Migrated (load {at_migrate}):", "", "| revision | file | seconds |", "|---|---|---|"]
        lines += [f"| {rev} | `{name}` | {s:.1f} |" for rev, name, s in steps] + [""]
    lines += [
        "| call | large p50 | p95 | p99 | small p50 | p95 | p99 | load (1 min) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, big, little, at in rows:
        shown = [" | ".join(f"{x:.1f}" for x in stats) for stats in (big, little)]
        lines.append(f"| {label} | {shown[0]} | {shown[1]} | {at:.1f} |")
    lines += ["", f"Statements of 10 ms or more (auto_explain): {len(plans)}.", ""]
    lines += [f"- {ms:.1f} ms: `{plan.splitlines()[0][:160]}`" for ms, plan in plans[:12]]
    (results_dir() / f"scale-reads-1m-{options.label}-explain.txt").write_text(
        "".join(f"-- {ms:.1f} ms\n{plan}\n\n" for ms, plan in plans) or "no statement took 10 ms or more\n"
    )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    from loyalty_api.logs import configure_logging

    configure_logging("WARNING")
    parsed = _options(sys.argv[1:])
    report = run(parsed)
    (results_dir() / f"scale-reads-1m-{parsed.label}.md").write_text(report)
    print(report)
