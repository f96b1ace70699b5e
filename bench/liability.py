"""The points liability report on a year of data (LIABILITY-2): the report of the large vendor (millions
of ledger entries) against a small vendor's, read through core as the API reads it.

``just bench liability`` (the ``scale`` benchmark's sizes and options: ``--small``, ``--entries``,
...) builds or finds the scale template, folds nothing (the template's totals are folded to its
last entry, as a running service keeps them within a minute), then times the default twelve
months and the longest range (36 months) many times on each vendor. Reads only: the template is
not changed.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from datetime import UTC, datetime

from sqlalchemy import text

from bench._scale_build import ensure_template, url_of
from bench._scale_sizes import add_options, sizes_of
from bench._support import machine, percentiles
from loyalty_core.db import make_engine, make_sessionmaker
from loyalty_core.wallet.liability import add_months, liability_report, month_of

RUNS = 200
_BACKLOG = (
    "SELECT count(*) FROM point_lots WHERE vendor_id = :vendor_id AND remaining > 0 AND expires_at IS NOT NULL"
    " AND expires_at <= now()"
)


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench liability", description=(__doc__ or "").split("\n\n")[0])
    add_options(parser)
    parser.add_argument("--runs", type=int, default=RUNS, help=f"reports timed per case (default {RUNS})")
    return parser.parse_args(argv)


async def _time(url: str, vendor_id: int, months: int, runs: int) -> tuple[list[float], int]:
    engine = make_engine(url)
    sessions = make_sessionmaker(engine)
    now = datetime.now(UTC)
    last = month_of(now)
    first = add_months(last, -(months - 1))
    samples: list[float] = []
    closing = 0
    try:
        async with sessions() as session:
            for _ in range(runs + 5):
                began = time.perf_counter()
                report = await liability_report(session, vendor_id, 100, first, last, now)
                samples.append((time.perf_counter() - began) * 1000)
                closing = report.months[-1].closing
                await session.rollback()
    finally:
        await engine.dispose()
    return samples[5:], closing


async def _backlog(url: str, vendor_id: int) -> int:
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            found = await conn.execute(text(_BACKLOG), {"vendor_id": vendor_id})
            return int(found.scalar_one())
    finally:
        await engine.dispose()


def run(argv: list[str] | None = None) -> str:
    options = _options(argv or [])
    sizes = sizes_of(options)
    template, _ = ensure_template(sizes, lambda line: print(line, flush=True))
    url = url_of(template).replace("postgresql://", "postgresql+psycopg://", 1)
    lines = [
        "# Liability report (LIABILITY-2)",
        "",
        f"Template `{template}`: {sizes}. {machine()}",
        "",
        "The part that is not a fixed number of rows is the lots that ended without an `expire` entry",
        "yet (the expire-points job's backlog; the template leaves the job unrun): they are read through",
        "the expiring-lots index at about a microsecond each, so a deployment whose job runs nightly reads",
        "a day's worth.",
        "",
        "| vendor | months | p50 ms | p99 ms | closing now | lots ended, not yet expired |",
        "|---|---|---|---|---|---|",
    ]
    backlog = {vendor_id: asyncio.run(_backlog(url, vendor_id)) for vendor_id in (1, 2)}
    for label, vendor_id in (("large (id 1)", 1), ("small (id 2)", 2)):
        for months in (12, 36):
            samples, closing = asyncio.run(_time(url, vendor_id, months, options.runs))
            p50, p99 = percentiles(samples)
            lines.append(f"| {label} | {months} | {p50:.2f} | {p99:.2f} | {closing:,} | {backlog[vendor_id]:,} |")
    return "\n".join(lines) + "\n"
