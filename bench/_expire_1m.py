"""The batched ``expire-points`` job at one million customers: ``python -m bench._expire_1m [size options]``.

The scale template (``bench._scale_build.ensure_template``) is cloned (and migrated to this schema
when it is of an older one), then up to ``--lots`` open lots are made due at once (ended yesterday,
at three instants an hour apart, counting the lots already past their end) and the table vacuumed
and analysed. Served by ``loyalty serve`` as ``bench scale`` serves it, on the large vendor
(vendor 1):

- the liability report (12 months), ``--requests`` after 5 warm-up ones, as cloned (before the
  lots are made due);
- the till's card lookup, ``--requests`` alone, as the baseline of the lookups beside the job;
- the job in a process of its own (``bench._scale_job``: seconds and peak resident memory), with
  the lookup looping beside it (``--beside``) or alone;
- ``ledger-totals`` (the worker runs it every minute), then the liability report again, right
  after and once ``VACUUM (ANALYZE) point_lots`` has done what autovacuum does after the job's
  million updates (the partial indexes of open lots still point at every emptied lot until then).

The figures go to ``bench/results/expire-points-1m.md`` (``-beside.md`` with ``--beside``); the
clone is dropped when the process exits.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg

from bench import results_dir
from bench._scale_build import clone, ensure_template
from bench._scale_calls import liability, lookup, open_shop, timed
from bench._scale_measure import _stats
from bench._scale_sizes import add_options, sizes_of
from bench._scale_verify import _migrate, _sa
from bench._servers import start_service
from bench._support import SERVER, machine, scratch_name

DUE = """SELECT count(*) AS lots, count(DISTINCT wallet_id) AS wallets FROM point_lots
WHERE remaining > 0 AND expires_at <= now()"""

MAKE_DUE = """UPDATE point_lots p
SET expires_at = date_trunc('hour', now()) - interval '1 day' - (p.id %% 3) * interval '1 hour'
FROM (
    SELECT vendor_id, id FROM point_lots
    WHERE remaining > 0 AND (expires_at IS NULL OR expires_at > now())
    ORDER BY wallet_id, id
    LIMIT %(lots)s
) c
WHERE p.vendor_id = c.vendor_id AND p.id = c.id"""


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench._expire_1m", description=(__doc__ or "").split("\n\n")[0])
    add_options(parser)
    parser.add_argument("--lots", type=int, default=1_000_000, help="lots due at once (1,000,000)")
    parser.add_argument("--requests", type=int, default=30, help="requests per timed call (30)")
    parser.add_argument("--beside", action="store_true", help="loop the till's lookup beside the job")
    return parser.parse_args(argv)


def _clone(template: str, database: str) -> str:
    """A clone, retried while another run copies the template ("being accessed by other users")."""
    for _ in range(20):
        try:
            return clone(template, database)
        except psycopg.errors.ObjectInUse:
            print("expire-1m: the template is busy; again in 30 s", flush=True)
            time.sleep(30)
    raise SystemExit("the template stayed busy")


def _load() -> str:
    return ", ".join(f"{a:.1f}" for a in os.getloadavg())


def _job(url: str, name: str, client: httpx.Client, shop: Any, beside: bool) -> tuple[dict[str, Any], list[float]]:
    job = subprocess.Popen(
        [sys.executable, "-m", "bench._scale_job", name, _sa(url)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    samples: list[float] = []
    n = 0
    while beside and job.poll() is None:
        began = time.perf_counter()
        lookup(client, shop, n)
        samples.append((time.perf_counter() - began) * 1000)
        n += 1
    out, err = job.communicate()
    if job.returncode != 0:
        raise SystemExit(f"the job failed: {err.strip()[-2000:]}")
    return json.loads(out.strip().splitlines()[-1]), samples


def _make_due(db: psycopg.Connection[Any], lots: int) -> tuple[Any, Any, float, str]:
    """Up to ``lots`` open lots due (those already past their end counted), vacuumed and analysed:
    the lots due before, those due after, the seconds it took and the first batch's plan."""
    already = db.execute(DUE).fetchone()
    began = time.monotonic()
    db.execute(MAKE_DUE, {"lots": max(0, lots - int((already or (0,))[0]))})
    db.execute("VACUUM (ANALYZE) point_lots")
    db.execute("VACUUM (ANALYZE) wallets")
    made_s = time.monotonic() - began
    due = db.execute(DUE).fetchone()
    assert already is not None
    assert due is not None
    print(f"expire-1m: {due[0]:,} lots of {due[1]:,} wallets due ({already[0]:,} already), {made_s:.0f} s", flush=True)
    plan = _lock_plan(db)
    print(plan, flush=True)
    return already, due, made_s, plan


def _lock_plan(db: psycopg.Connection[Any]) -> str:
    """The first batch's choosing and locking statement, as planned for this data (no ANALYZE: it
    would lock)."""
    from datetime import UTC, datetime

    from loyalty_core.till_sql import registered

    (lock,) = [s.text for s in registered()["loyalty_core.wallet.till_expiry"] if s.name == "lock"]
    from loyalty_api.jobs.expire_points import BATCH_LOTS

    params = {"now": datetime.now(UTC), "after": 0, "size": BATCH_LOTS}
    rows = psycopg.ClientCursor(db).execute(f"EXPLAIN {lock}", params).fetchall()
    return "\n".join(str(r[0]) for r in rows)


FOLD_RUNS = 4
"""``ledger-totals`` runs after the job: the first records the bound past its entries, the next fold
up to it (at most ``wallet.jobs.BATCH`` entries a run)."""


def _fold(url: str, client: httpx.Client, shop: Any) -> list[dict[str, Any]]:
    folds = []
    for _ in range(FOLD_RUNS):
        folded, _ = _job(url, "ledger-totals", client, shop, False)
        print(f"expire-1m: {folded}", flush=True)
        folds.append(folded)
    return folds


def run(argv: list[str]) -> str:
    options = _options(argv)
    sizes = sizes_of(options)
    with psycopg.connect(SERVER, autocommit=True) as server:
        built = server.execute(
            "SELECT 1 FROM pg_database WHERE datname LIKE %s", (f"loyalty_scale_tpl_%_{sizes.key()}",)
        ).fetchone()
    if built is None:
        raise SystemExit(f"no scale template of {sizes}: build it first (bench scale --build-only)")
    template, behind = ensure_template(sizes, print)
    database = scratch_name("loyalty_scale_expire")
    began = time.monotonic()
    url = _clone(template, database)
    print(f"expire-1m: cloned {template} in {time.monotonic() - began:.0f} s", flush=True)
    if behind:
        _migrate(url)
    db = psycopg.connect(url, autocommit=True)
    os.environ["LOYALTY_WORKER"] = "external"
    with tempfile.TemporaryDirectory() as logs, httpx.Client(timeout=600) as client:
        service = start_service(_sa(url), 1, Path(logs))
        try:
            client.base_url = httpx.URL(service.url)
            shop = open_shop(client, service.url, "large", 1, db, str(int(time.time())))
            load_liability_before = _load()
            _, liability_before = timed(liability, client, shop, options.requests)
            already, due, made_s, plan = _make_due(db, options.lots)
            entries_before = int((db.execute("SELECT count(*) FROM ledger_entries").fetchone() or (0,))[0])
            load_lookup = _load()
            _, lookups_alone = timed(lookup, client, shop, options.requests * 10)
            load_job = _load()
            answer, lookups_beside = _job(url, "expire-points", client, shop, options.beside)
            load_job_after = _load()
            print(f"expire-1m: {answer}", flush=True)
            folds = _fold(url, client, shop)
            load_liability_after = _load()
            _, liability_after = timed(liability, client, shop, options.requests)
            began = time.monotonic()
            db.execute("VACUUM (ANALYZE) point_lots")
            vacuum_s = time.monotonic() - began
            load_liability_vacuumed = _load()
            _, liability_vacuumed = timed(liability, client, shop, options.requests)
        finally:
            service.stop()
    left = db.execute(DUE).fetchone()
    assert left is not None
    entries = int((db.execute("SELECT count(*) FROM ledger_entries").fetchone() or (0,))[0]) - entries_before
    db.close()
    seconds = float(answer["seconds"])

    def ms(samples: list[float]) -> str:
        p50, p95, p99 = _stats(samples) if samples else (0.0, 0.0, 0.0)
        return f"{p50:.1f} / {p95:.1f} / {p99:.1f}"

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [
        "# `expire-points` in batches at one million customers",
        "",
        f"`python -m bench._expire_1m{' --beside' if options.beside else ''}` at commit `{commit}`, template "
        f"`{template}`; 2-core dev machine ({machine()}).",
        f"Made due: {due[0]:,} open lots of {due[1]:,} wallets ({already[0]:,} were past their end already), "
        f"in {made_s:.0f} s with `VACUUM (ANALYZE)`.",
        "",
        "## The job",
        "",
        f"Load average {load_job} before, {load_job_after} after"
        f"{'; the till lookup looping beside it' if options.beside else '; nothing else on the service'}.",
        "",
        "| lots | wallets | entries | seconds | lots/s | entries/s | peak RSS | failed | left due |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| {due[0] - left[0]:,} | {answer['answer']['wallets']:,} | {entries:,} | {seconds:.1f} | "
        f"{(due[0] - left[0]) / seconds:,.0f} | {entries / seconds:,.0f} | {answer['peak_rss_mb']:.0f} MB | "
        f"{answer['answer']['failed']} | {left[0]:,} |",
        "",
        "The first batch's choosing and locking statement, as planned:",
        "",
        "```",
        plan,
        "```",
        "",
        f"`ledger-totals` then folded the new entries (as the worker does every minute; a run folds up to "
        f"the bound the run before recorded, {FOLD_RUNS} runs): "
        f"{sum(f['answer']['entries'] for f in folds):,} entries in {sum(float(f['seconds']) for f in folds):.1f} s, "
        f"peak RSS {max(f['peak_rss_mb'] for f in folds):.0f} MB.",
        "",
        "## Requests (ms, p50 / p95 / p99)",
        "",
        "| call | requests | load average | ms |",
        "|---|---|---|---|",
        f"| liability (12 months), as cloned (before the lots were made due) | {len(liability_before)} | "
        f"{load_liability_before} | "
        f"{ms(liability_before)} |",
        f"| liability (12 months), after the job and `ledger-totals` | {len(liability_after)} | "
        f"{load_liability_after} | "
        f"{ms(liability_after)} |",
        f"| liability (12 months), then after `VACUUM (ANALYZE) point_lots` ({vacuum_s:.0f} s) | "
        f"{len(liability_vacuumed)} | {load_liability_vacuumed} | {ms(liability_vacuumed)} |",
        f"| till lookup alone | {len(lookups_alone)} | {load_lookup} | {ms(lookups_alone)} |",
    ]
    if options.beside:
        lines.append(f"| till lookup beside the job | {len(lookups_beside)} | {load_job} | {ms(lookups_beside)} |")
    text = "\n".join(lines) + "\n"
    (results_dir() / f"expire-points-1m{'-beside' if options.beside else ''}.md").write_text(text)
    return text


if __name__ == "__main__":
    print(run(sys.argv[1:]))
