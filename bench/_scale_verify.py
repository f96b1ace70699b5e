"""One fix measured on the scale template of an older schema: ``python -m bench._scale_verify [size options]``.

The template of these sizes (``bench._scale_build.ensure_template``: this schema's, else the newest
of an older one; never built here) is cloned, the clone migrated to this schema one revision at a
time (each timed: MIGRATE-1's evidence on a year of data), then served by ``loyalty serve`` as
``bench scale`` serves it, and on the large vendor (vendor 1) and the small one (vendor 2):

- the admin customer list, page 1 and the last page (100 a page), ``--requests`` each;
- the portal's customer list, page 1 and the deepest page it serves, ``--requests`` each;
- the ``expire-points`` job for ``--job-seconds`` (lots per second), sampled by ``py-spy`` (``uvx``,
  idle frames kept, so waiting on PostgreSQL shows), its slow statements read back from
  ``auto_explain``.

A call whose first request takes more than ``--slow`` seconds is timed ``--slow-requests`` times
only. The figures go to ``bench/results/scale-1m-after.md``, the job's profile to
``scale-1m-after-expire.collapsed.txt``; the clone is dropped when the process exits.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import psycopg

from bench import results_dir
from bench._scale_build import clone, ensure_template
from bench._scale_calls import Call, Shop, _check, _portal, admin_first_page, lookup, open_shop, timed
from bench._scale_measure import JOBS, LOG, _explain_on, _slow_plans, _stats
from bench._scale_sizes import add_options, sizes_of
from bench._servers import ADMIN, start_service
from bench._support import machine, scratch_name

PER_PAGE = 100


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench._scale_verify", description=(__doc__ or "").split("\n\n")[0])
    add_options(parser)
    parser.add_argument("--requests", type=int, default=20, help="requests per timed call (20)")
    parser.add_argument("--slow", type=float, default=5.0, help="seconds a first request may take (5)")
    parser.add_argument("--slow-requests", type=int, default=2, help="requests of a call over --slow (2)")
    parser.add_argument("--job-seconds", type=int, default=90, help="seconds expire-points runs (90)")
    return parser.parse_args(argv)


def _sa(url: str) -> str:
    return url.replace("postgresql://", "postgresql+psycopg://", 1)


def _migrate(url: str) -> list[tuple[str, str, float]]:
    """Upgrade the clone one revision at a time: (revision, its file, seconds) each."""
    from alembic.script import ScriptDirectory

    from loyalty_api.migrate import MIGRATIONS, VERSION_TABLE, upgrade

    with psycopg.connect(url) as db:
        at = {str(r[0]) for r in db.execute(f"SELECT version_num FROM {VERSION_TABLE}").fetchall()}
    script = ScriptDirectory(str(MIGRATIONS))
    pending = []
    for revision in script.walk_revisions():
        if revision.revision in at:
            break
        pending.append(revision)
    steps = []
    for revision in reversed(pending):
        began = time.monotonic()
        upgrade(_sa(url), revision.revision)
        steps.append((revision.revision, Path(revision.path).name, time.monotonic() - began))
        print(f"verify: migrated {revision.revision} in {steps[-1][2]:.1f} s", flush=True)
    return steps


def _admin_last(last: dict[int, int]) -> Call:
    def call(c: httpx.Client, s: Shop, n: int) -> str:
        params = {"per_page": PER_PAGE, "page": last[s.vendor_id]}
        _check(c.get(f"/admin/v1/vendors/{s.vendor_id}/customers", params=params, headers=ADMIN))
        return "GET /admin/v1/vendors/{id}/customers (the last page)"

    return call


def _last_pages(client: httpx.Client, shops: list[Shop]) -> dict[int, int]:
    pages = {}
    for shop in shops:
        first = _check(
            client.get(f"/admin/v1/vendors/{shop.vendor_id}/customers", params={"per_page": PER_PAGE}, headers=ADMIN)
        )
        pages[shop.vendor_id] = max(1, int(first.json()["data"]["meta"].get("last_page") or 1))
    return pages


def _portal_deepest(customers: int) -> int:
    """The deepest page of the portal's list: the last, or the last its count cap serves."""
    from loyalty_core.listing import PER_PAGE as SHOWN
    from loyalty_core.listing import last_page

    return max(1, min(last_page(SHOWN), -(-customers // SHOWN)))


def _timed(call: Call, client: httpx.Client, shop: Shop, options: argparse.Namespace) -> tuple[str, list[float]]:
    began = time.perf_counter()
    call(client, shop, 0)
    first = time.perf_counter() - began
    requests = options.slow_requests if first > options.slow else options.requests
    label, samples = timed(call, client, shop, requests, warm_up=0 if first > options.slow else 4)
    return label, samples


def _expire(url: str, db: psycopg.Connection[Any], seconds: int, shop: Shop, client: httpx.Client,
            profile: Path) -> dict[str, Any]:  # fmt: skip
    count = dict(JOBS)["expire-points"]
    before = int((db.execute(count).fetchone() or (0,))[0])
    job = subprocess.Popen(
        [sys.executable, "-m", "bench._scale_job", "expire-points", _sa(url)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    time.sleep(5)  # the import; the job has begun by then
    uvx = shutil.which("uvx") or str(Path.home() / ".local/bin/uvx")
    spy = subprocess.Popen(
        [uvx, "py-spy", "record", "--pid", str(job.pid), "--idle", "--format", "raw", "--rate", "50",
         "--duration", str(seconds - 10), "--output", str(profile), "--nonblocking"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    samples: list[float] = []
    ends = time.monotonic() + seconds - 5
    n = 0
    while time.monotonic() < ends and job.poll() is None:
        began = time.perf_counter()
        lookup(client, shop, n)
        samples.append((time.perf_counter() - began) * 1000)
        n += 1
        time.sleep(0.2)
    finished = job.poll() is not None
    if not finished:
        os.killpg(job.pid, signal.SIGTERM)
    out, err = job.communicate(timeout=60)
    spy_err = spy.communicate(timeout=120)[1]
    after = int((db.execute(count).fetchone() or (0,))[0])
    return {
        "due_before": before,
        "lots": before - after,
        "seconds": seconds,
        "finished": finished,
        "answer": out.strip()[-400:] if finished else "",
        "error": "" if finished else err.strip()[-300:],
        "spy": spy_err.strip()[-300:],
        "till": _stats(samples or [0.0]),
    }


def _profile_lines(profile: Path, top: int = 14) -> list[str]:
    """The profile's leaf frames (own samples), and the share spent waiting (py-spy's idle frames)."""
    if not profile.exists():
        return ["no profile was written"]
    leaves: Counter[str] = Counter()
    total = 0
    for line in profile.read_text().splitlines():
        stack, _, hits = line.rpartition(" ")
        if not hits.isdigit():
            continue
        total += int(hits)
        leaves[stack.split(";")[-1]] += int(hits)
    lines = [f"{total:,} samples; the frames most often on top:", "", "| share | frame |", "|---|---|"]
    for frame, count in leaves.most_common(top):
        lines.append(f"| {count / max(total, 1):.1%} | `{frame[:150]}` |")
    return lines


def run(argv: list[str]) -> str:
    options = _options(argv)
    sizes = sizes_of(options)
    template, behind = ensure_template(sizes, print)
    database = scratch_name("loyalty_scale_verify")
    began = time.monotonic()
    url = clone(template, database)
    cloned = time.monotonic() - began
    print(f"verify: cloned {template} in {cloned:.0f} s", flush=True)
    load_migrate = os.getloadavg()
    steps = _migrate(url) if behind else []
    db = psycopg.connect(url, autocommit=True)
    customers = {
        v: int((db.execute("SELECT count(*) FROM customers WHERE vendor_id = %s", (v,)).fetchone() or (0,))[0])
        for v in (1, 2)
    }
    _explain_on(db, database)
    os.environ["LOYALTY_WORKER"] = "external"
    load_before = os.getloadavg()
    rows: list[tuple[str, tuple[float, ...], int, tuple[float, ...], int]] = []
    profile = results_dir() / "scale-1m-after-expire.collapsed.txt"
    with tempfile.TemporaryDirectory() as logs, httpx.Client(timeout=900) as client:
        service = start_service(_sa(url), 1, Path(logs))
        try:
            client.base_url = httpx.URL(service.url)
            run_id = str(int(time.time()))
            shops = [open_shop(client, service.url, label, v, db, run_id) for label, v in (("large", 1), ("small", 2))]
            last = _last_pages(client, shops)
            deepest = {v: _portal_deepest(n) for v, n in customers.items()}
            start = LOG.stat().st_size if LOG.exists() else 0
            calls: list[Call] = [
                admin_first_page,
                _admin_last(last),
                _portal(lambda s: "/portal/customers", "/portal/customers (page 1)"),
                _portal(
                    lambda s: f"/portal/customers?page={deepest[s.vendor_id]}",
                    "/portal/customers?page= (the deepest served)",
                ),
            ]
            for call in calls:
                label, big = _timed(call, client, shops[0], options)
                _, little = _timed(call, client, shops[1], options)
                rows.append((label, _stats(big), len(big), _stats(little), len(little)))
                print(f"verify: {label}: {rows[-1]}", flush=True)
            job_start = LOG.stat().st_size if LOG.exists() else 0
            job = _expire(url, db, options.job_seconds, shops[0], client, profile)
            print(f"verify: expire-points {job}", flush=True)
            time.sleep(1)
            read_plans = _slow_plans(start, database)
            job_plans = _slow_plans(job_start, database)
        finally:
            service.stop()
    db.close()
    (results_dir() / "scale-1m-after-explain.txt").write_text(
        "".join(f"-- {ms:.1f} ms\n{plan}\n\n" for ms, plan in read_plans) or "no statement took 10 ms or more\n"
    )
    return "\n".join(_report(template, sizes, cloned, steps, load_migrate, load_before, customers, last, deepest,
                             rows, job, job_plans, profile, options)) + "\n"  # fmt: skip


def _report(template: str, sizes: Any, cloned: float, steps: list[tuple[str, str, float]], load_migrate: Any,
            load_before: Any, customers: dict[int, int], last: dict[int, int], deepest: dict[int, int],
            rows: list[Any], job: dict[str, Any], job_plans: list[tuple[float, str]], profile: Path,
            options: argparse.Namespace) -> list[str]:  # fmt: skip
    load, now, at_migrate = (", ".join(f"{a:.1f}" for a in avg) for avg in (load_before, os.getloadavg(), load_migrate))
    lines = [
        "# Scale at one million customers, after `OPEN_LOT` (eb3d6bd)",
        "",
        f"Template `{template}` ({sizes}); cloned in {cloned:.0f} s. {machine()}; load average {load} before the",
        f"requests, {now} at the end. Customers: large vendor {customers[1]:,}, small {customers[2]:,}.",
        "",
        f"## The clone migrated to this schema, one revision at a time (load {at_migrate})",
        "",
        "| revision | file | seconds |",
        "|---|---|---|",
        *[f"| {rev} | `{name}` | {s:.1f} |" for rev, name, s in steps],
        "",
        f"## Requests one after another through granian ({options.requests} each after 4 warm-up ones; a call",
        f"whose first request took over {options.slow:.0f} s: {options.slow_requests}, no warm-up) (ms)",
        "",
        f"Last admin page: {last[1]:,} (large), {last[2]:,} (small); deepest portal page served:"
        f" {deepest[1]:,}, {deepest[2]:,}.",
        "",
        "| call | large p50 | p95 | p99 | n | small p50 | p95 | p99 | n |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, big, nb, little, nl in rows:
        large, small = (" | ".join(f"{x:.1f}" for x in stats) for stats in (big, little))
        lines.append(f"| {label} | {large} | {nb} | {small} | {nl} |")
    rate = job["lots"] / job["seconds"] if job["seconds"] else 0
    lines += [
        "",
        f"## `expire-points` for {job['seconds']} s on the large vendor's clone",
        "",
        f"{job['lots']:,} lots expired of {job['due_before']:,} due: {rate:.0f} lots/s"
        f" ({'finished' if job['finished'] else 'stopped'}); a lookup every 0.2 s beside it:"
        f" p50 / p95 / p99 {' / '.join(f'{x:.1f}' for x in job['till'])} ms. {job['answer']} {job['error'][-200:]}",
        "",
        f"py-spy (idle frames kept, 50 Hz, {profile.name}): {job['spy'][-200:]}",
        "",
        *_profile_lines(profile),
        "",
        f"Statements of 10 ms or more during the job (auto_explain): {len(job_plans)}.",
        "",
        *[f"- {ms:.1f} ms: `{plan.splitlines()[0][:200]}`" for ms, plan in job_plans[:10]],
    ]
    return lines


if __name__ == "__main__":
    from loyalty_api.logs import configure_logging

    configure_logging("WARNING")
    report = run(sys.argv[1:])
    (results_dir() / "scale-1m-after.md").write_text(report)
    print(report)
