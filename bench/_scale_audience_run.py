"""The campaign-mail audience alone on a clone of the scale template:
``python -m bench._scale_audience_run [size options] [--grace N] [--repeats N] [--label NAME]``.

The template (``bench._scale_build.ensure_template``; never built here) is cloned and the clone
migrated to this schema when it is older (``bench._scale_verify``'s steps); consent and birthdays as
``bench._scale_1m`` gives them (``give_consent``); the plan's ``tiers`` on and both vendors' ladder
``bench._scale_1m``'s (four spend tiers at the large vendor's 50th, 80th and 95th percentiles of 12
months' spend), written straight into the tables here with ``--grace`` grace months. Then each
audience of ``bench._scale_audience.AUDIENCES`` is counted ``--repeats`` times by the core functions,
and the large vendor's tier, first-tier and ``min_balance`` counts are explained once
(``EXPLAIN (ANALYZE, BUFFERS)``). The figures go to ``bench/results/scale-audience-<label>.md``, the
plans to ``scale-audience-<label>-plans.txt``; the clone is dropped when the process exits.

To measure another checkout's core against the same clone, put its ``packages/loyalty_core/src``
first on ``PYTHONPATH``: its ``loyalty_core`` is the one imported.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import time
from typing import Any

import psycopg
from sqlalchemy import func, select

from bench import results_dir
from bench._scale_1m import _ladder
from bench._scale_audience import AUDIENCES, Counted, count_audiences, give_consent
from bench._scale_build import clone, ensure_template
from bench._scale_sizes import add_options, sizes_of
from bench._scale_verify import _migrate, _sa
from bench._support import SERVER, machine, scratch_name

EXPLAINED = ("tiers gold, platinum", "tier bronze (the first tier: everyone but the others)",
             "min_balance 500 and inactive 90 days")  # fmt: skip


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench._scale_audience_run", description=(__doc__ or "").split("\n\n")[0])
    add_options(parser)
    parser.add_argument("--grace", type=int, default=0, help="the ladder's grace months (0)")
    parser.add_argument("--repeats", type=int, default=3, help="times each audience is counted (3)")
    parser.add_argument("--consent", type=float, default=0.4, help="share of customers consenting (0.4)")
    parser.add_argument("--label", default="after", help="the results' name: scale-audience-<label>.md")
    return parser.parse_args(argv)


LADDER = """
WITH made AS (
    INSERT INTO tier_ladders (id, vendor_id, basis, period_months, grace_months, created_at, updated_at)
    VALUES (nextval('tier_ladders_id_seq'), %(vendor)s, %(basis)s, %(period)s, %(grace)s, now(), now())
    RETURNING id
)
INSERT INTO tiers (id, vendor_id, ladder_id, position, key, name, threshold, multiplier_percent, created_at, updated_at)
SELECT nextval('tiers_id_seq'), %(vendor)s, made.id, t.position - 1, t.key, t.name, t.threshold, t.multiplier,
       now(), now()
  FROM made, unnest(%(keys)s::text[], %(names)s::text[], %(thresholds)s::int[], %(multipliers)s::int[])
       WITH ORDINALITY AS t(key, name, threshold, multiplier, position)
"""


def _put_ladder(db: psycopg.Connection[Any], ladder: dict[str, Any], grace: int) -> None:
    """The plan's ``tiers`` and both vendors' ladder, as the admin API's ``PUT`` would store them."""
    db.execute("UPDATE plans SET feature_tiers = true WHERE id IN (SELECT plan_id FROM vendors WHERE id IN (1, 2))")
    tiers = ladder["tiers"]
    for vendor in (1, 2):
        db.execute(
            LADDER,
            {
                "vendor": vendor,
                "basis": ladder["basis"],
                "period": ladder["period_months"],
                "grace": grace,
                "keys": [t["key"] for t in tiers],
                "names": [t["name"] for t in tiers],
                "thresholds": [t["threshold"] for t in tiers],
                "multipliers": [t["multiplier_percent"] for t in tiers],
            },
        )


async def _explain(url: str, now: Any) -> str:
    """The large vendor's ``audience_count`` statement of each ``EXPLAINED`` audience, run under
    ``EXPLAIN (ANALYZE, BUFFERS)`` in a session of its own."""
    from loyalty_core.db import make_engine, make_sessionmaker
    from loyalty_core.mailings.reads import members
    from loyalty_core.mailings.rules import Audience

    engine = make_engine(_sa(url))
    sessions = make_sessionmaker(engine)
    out = ""
    try:
        for label, criteria in AUDIENCES:
            if label not in EXPLAINED:
                continue
            async with sessions() as session:
                inner = (await members(session, 1, Audience(**criteria), now)).subquery()
                compiled = select(func.count()).select_from(inner).compile(engine.sync_engine)
                connection = await session.connection()
                rows = await connection.exec_driver_sql(
                    "EXPLAIN (ANALYZE, BUFFERS) " + str(compiled), dict(compiled.params)
                )
                plan = "\n".join(str(row[0]) for row in rows)
            out += f"-- vendor 1, {label} (audience_count), load {_load()}\n{plan}\n\n"
    finally:
        await engine.dispose()
    return out


def _load() -> str:
    return ", ".join(f"{a:.1f}" for a in os.getloadavg())


def _commit() -> str:
    """The commit of the checkout whose ``loyalty_core`` was imported."""
    found = subprocess.run(
        ["git", "-C", _imported_core(), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    )
    return found.stdout.strip() or "unknown"


def run(argv: list[str]) -> str:
    from loyalty_core.clock import SystemClock

    options = _options(argv)
    sizes = sizes_of(options)
    with psycopg.connect(SERVER, autocommit=True) as conn:
        found = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname LIKE %s", (f"loyalty_scale_tpl_%_{sizes.key()}",)
        ).fetchone()
    if found is None:
        # a build takes a quarter of an hour of both cores: that is `bench scale --build-only`'s to do
        raise SystemExit(f"no scale template of {sizes}: build it first (bench scale --build-only)")
    template, behind = ensure_template(sizes, print)
    database = scratch_name("loyalty_scale_audience")
    began = time.monotonic()
    url = clone(template, database)
    cloned = time.monotonic() - began
    if behind:
        _migrate(url)
    with psycopg.connect(url, autocommit=True) as db:
        consenting, _ = give_consent(db, options.consent)
        ladder = _ladder(db)
        _put_ladder(db, ladder, options.grace)
    load_before = _load()
    counted, _ = count_audiences(url, [1, 2], options.repeats, with_months=False)
    plans = asyncio.run(_explain(url, SystemClock().now()))
    (results_dir() / f"scale-audience-{options.label}-plans.txt").write_text(plans)
    thresholds = [tier["threshold"] for tier in ladder["tiers"]]
    head = [
        f"# Campaign-mail audience at scale ({options.label})",
        "",
        f"`python -m bench._scale_audience_run --grace {options.grace} --repeats {options.repeats}"
        f" --label {options.label}`; `loyalty_core` from `{_imported_core()}` at commit {_commit()}.",
        f"Template `{template}`, cloned in {cloned:.0f} s; {machine()} (2-core dev machine, shared);",
        f"load average {load_before} before, {_load()} after. Consent given to {consenting:,} customers.",
        f"Ladder: spend, 12 months, {options.grace} grace months, thresholds {thresholds}.",
    ]
    return "\n".join(head + _table(counted)) + "\n"


def _imported_core() -> str:
    import loyalty_core

    return os.path.dirname(os.path.dirname(loyalty_core.__file__ or ""))


def _table(counted: list[Counted]) -> list[str]:
    lines = [
        "",
        "Each count in its own session, in this process (ms):",
        "",
        "| vendor | audience | function | count | median | max | load (1, 5, 15 min) |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in counted:
        ordered = sorted(c.samples_ms)
        load = ", ".join(f"{a:.1f}" for a in c.load)
        lines.append(
            f"| {c.vendor_id} | {c.audience} | {c.function} | {c.count:,} | {ordered[len(ordered) // 2]:.0f}"
            f" | {ordered[-1]:.0f} | {load} |"
        )
    return lines


if __name__ == "__main__":
    import sys

    from loyalty_api.logs import configure_logging

    configure_logging("WARNING")
    label = _options(sys.argv[1:]).label
    report = run(sys.argv[1:])
    (results_dir() / f"scale-audience-{label}.md").write_text(report)
    print(report)
