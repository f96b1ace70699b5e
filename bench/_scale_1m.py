"""Tiers, campaign mail and the liability report at scale: ``python -m bench._scale_1m [size options]``.

On a clone of the template (built by ``bench scale --build-only`` with the same size options), served
by ``loyalty serve`` as ``bench scale`` serves it, each against the small vendor of the same run:

- liability: the liability report (12 and 36 months), ``--requests`` each;
- tiers: the till's lookup and purchase without a ladder (plan feature ``tiers`` off), then with a
  4-tier spend ladder ``PUT`` through the admin API on both vendors (the plan's ``tiers`` on; the
  thresholds the large vendor's 50th, 80th and 95th percentiles of 12 months' spend; the
  ``tier-moves`` job not run: a vendor's first ladder moves no one, TIER-15); then each call's plans
  read back from the server's log (every statement logged) and compared, large against small;
- campaign mail: the campaign-mail audience counted by the core functions (``bench._scale_audience``).

Every statement of 10 ms or more of the timed parts is kept with its plan in
``bench/results/scale-1m-explain.txt``; the compared plans in ``scale-1m-plans.txt``; the figures in
``scale-1m.md``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg
from psycopg import sql

from bench import results_dir
from bench._scale_audience import count_audiences, give_consent
from bench._scale_build import clone, ensure_template
from bench._scale_calls import Shop, liability, liability_longest, lookup, open_shop, purchase, timed
from bench._scale_measure import LOG, Row, _explain_on, _slow_plans, _stats, large_against_small
from bench._scale_shapes import Compared, compare, offset, plans_between, written
from bench._scale_sizes import add_options, sizes_of
from bench._servers import ADMIN, Server, start_service
from bench._support import machine, scratch_name

_SPEND = """
SELECT percentile_disc(ARRAY[0.5, 0.8, 0.95]) WITHIN GROUP (ORDER BY spent) AS cut FROM (
    SELECT sum(spend) AS spent FROM tier_months
    WHERE vendor_id = 1 AND month >= (date_trunc('month', now()) - interval '11 months')::date
    GROUP BY customer_id
) s
"""


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench._scale_1m", description=(__doc__ or "").split("\n\n")[0])
    add_options(parser)
    parser.add_argument("--requests", type=int, default=30, help="requests per timed call (default 30)")
    parser.add_argument("--consent", type=float, default=0.4, help="share of customers consenting (0.4)")
    parser.add_argument("--repeats", type=int, default=5, help="times each audience is counted (5)")
    return parser.parse_args(argv)


def _check(response: httpx.Response, *expected: int) -> httpx.Response:
    if response.status_code not in (expected or (200,)):
        raise RuntimeError(f"{response.request.method} {response.request.url}: {response.status_code} {response.text}")
    return response


def _ladder(db: psycopg.Connection[Any]) -> dict[str, Any]:
    cuts = [int(c) for c in (db.execute(_SPEND).fetchone() or ([0, 0, 0],))[0]]
    thresholds = [0]
    for cut in cuts:
        thresholds.append(max(cut, thresholds[-1] + 100))
    names = [("bronze", "Bronze", 100), ("silver", "Silver", 110), ("gold", "Gold", 125), ("platinum", "Platinum", 150)]
    return {
        "basis": "spend",
        "period_months": 12,
        "tiers": [
            {"key": key, "name": name, "threshold": threshold, "multiplier_percent": multiplier}
            for (key, name, multiplier), threshold in zip(names, thresholds, strict=True)
        ],
    }


def _tiers_on(client: httpx.Client, ladder: dict[str, Any] | None) -> None:
    """The plan's ``tiers`` and both vendors' ladder: on with ``ladder``, else off and deleted."""
    features = {"features": {"tiers": ladder is not None}}
    if ladder is not None:
        _check(client.patch("/admin/v1/plans/1", json=features, headers=ADMIN))
    for vendor in (1, 2):
        path = f"/admin/v1/vendors/{vendor}/tiers"
        if ladder is None:
            _check(client.delete(path, headers=ADMIN), 200, 204)
        else:
            _check(client.put(path, json=ladder, headers=ADMIN))
    if ladder is None:
        _check(client.patch("/admin/v1/plans/1", json=features, headers=ADMIN))


def _pair(call: Any, client: httpx.Client, large: Shop, small: Shop, requests: int, rows: list[Row], what: str) -> None:
    label, at_scale = timed(call, client, large, requests)
    _, on_small = timed(call, client, small, requests)
    rows.append((what, label, _stats(at_scale), _stats(on_small)))
    print(f"scale-1m: {what} {label}: {rows[-1][2]} vs {rows[-1][3]}", flush=True)


def _shapes(client: httpx.Client, large: Shop, small: Shop, database: str, state: str) -> tuple[list[Compared], str]:
    """Three lookups and three purchases on each vendor, every statement's plan read back."""
    compared: list[Compared] = []
    text = ""
    for call in (lookup, purchase):
        found = []
        for shop in (large, small):
            shop.run = f"{shop.run}-shape-{state}"
            start = offset(LOG)
            label, _ = timed(call, client, shop, 3, warm_up=2)
            time.sleep(1)
            found.append(plans_between(LOG, start, offset(LOG), database))
        compared.append(compare(f"{label} ({state})", found[0], found[1]))
        text += written(f"large, {label} ({state})", found[0]) + written(f"small, {label} ({state})", found[1])
    return compared, text


def _count(db: psycopg.Connection[Any], vendor_id: int) -> int:
    return int((db.execute("SELECT count(*) FROM customers WHERE vendor_id = %s", (vendor_id,)).fetchone() or (0,))[0])


def _serve(url: str, logs: Path) -> Server:
    return start_service(url.replace("postgresql://", "postgresql+psycopg://", 1), 1, logs)


def run(argv: list[str]) -> str:
    options = _options(argv)
    sizes = sizes_of(options)
    template, behind = ensure_template(sizes, print)
    if behind:
        raise SystemExit(f"{template} is of an older schema: build this schema's first (bench scale --build-only)")
    database = scratch_name("loyalty_scale_1m")
    began = time.monotonic()
    url = clone(template, database)
    cloned = time.monotonic() - began
    db = psycopg.connect(url, autocommit=True)
    consenting, consent_s = give_consent(db, options.consent)
    customers = {v: _count(db, v) for v in (1, 2)}
    _explain_on(db, database)
    os.environ["LOYALTY_WORKER"] = "external"
    load_before = os.getloadavg()
    rows: list[Row] = []
    compared: list[Compared] = []
    shapes_text = ""
    with tempfile.TemporaryDirectory() as logs, httpx.Client(timeout=600) as client:
        service = _serve(url, Path(logs))
        try:
            client.base_url = httpx.URL(service.url)
            run_id = str(int(time.time()))
            large = open_shop(client, service.url, "large", 1, db, run_id)
            small = open_shop(client, service.url, "small", 2, db, run_id)
            start = offset(LOG)
            for call in (liability, liability_longest):
                _pair(call, client, large, small, options.requests, rows, "liability")
            for call in (lookup, purchase):
                _pair(call, client, large, small, options.requests, rows, "tiers, no ladder")
            ladder = _ladder(db)
            _tiers_on(client, ladder)
            for shop in (large, small):
                shop.run += "-ladder"
            for call in (lookup, purchase):
                _pair(call, client, large, small, options.requests, rows, "tiers, 4-tier ladder")
            counted, months = count_audiences(url, [1, 2], options.repeats)
            time.sleep(1)
            slow = _slow_plans(start, database)
            (results_dir() / "scale-1m-explain.txt").write_text(
                "".join(f"-- {ms:.1f} ms\n{plan}\n\n" for ms, plan in slow) or "no statement took 10 ms or more\n"
            )
        finally:
            service.stop()
        db.execute(sql.SQL("ALTER DATABASE {} SET auto_explain.log_min_duration = 0").format(sql.Identifier(database)))
        service = _serve(url, Path(logs))
        try:
            client.base_url = httpx.URL(service.url)
            found, text = _shapes(client, large, small, database, "4-tier ladder")
            compared += found
            shapes_text += text
            _tiers_on(client, None)
            found, text = _shapes(client, large, small, database, "no ladder")
            compared += found
            shapes_text += text
        finally:
            service.stop()
    db.close()
    (results_dir() / "scale-1m-plans.txt").write_text(shapes_text)
    head = [
        "# Scale at one million customers: tiers, campaign mail and the liability report",
        "",
        f"Template `{template}` ({sizes}); cloned in {cloned:.0f} s. {machine()}; load average",
        f"{', '.join(f'{a:.1f}' for a in load_before)} before, {', '.join(f'{a:.1f}' for a in os.getloadavg())} after.",
        f"Customers: large vendor {customers[1]:,}, small vendor {customers[2]:,}. Consent given to {consenting:,}",
        f"customers ({options.consent:.0%} of each vendor's ids) and a date of birth to every one,",
        f"in {consent_s:.0f} s (`UPDATE` and `VACUUM (ANALYZE) customers`). Ladder: {ladder['tiers']}.",
    ]
    return "\n".join(head + _tables(rows, counted, months, compared, len(slow), options.requests)) + "\n"


def _tables(rows: list[Row], counted: list[Any], months: dict[int, list[float]], compared: list[Compared],
            slow: int, requests: int) -> list[str]:  # fmt: skip
    lines = [
        "",
        f"Requests one after another through granian, {requests} per call after 5 warm-up ones (ms):",
        "",
        *large_against_small("part", rows),
    ]
    lines += [
        "",
        "Campaign mail, the audience counted in this process (ms, each count in its own session):",
        "",
        "| vendor | audience | function | count | median | max |",
        "|---|---|---|---|---|---|",
    ]
    for c in counted:
        ordered = sorted(c.samples_ms)
        lines.append(
            f"| {c.vendor_id} | {c.audience} | {c.function} | {c.count:,} | {ordered[len(ordered) // 2]:.0f}"
            f" | {ordered[-1]:.0f} |"
        )
    for vendor, samples in months.items():
        ordered = sorted(samples)
        middle = ordered[len(ordered) // 2]
        alone = "(the tier rule's months alone, `family_months`)"
        lines.append(f"| {vendor} | {alone} | | | {middle:.0f} | {ordered[-1]:.0f} |")
    lines += [
        "",
        "Tiers, the plans of 3 calls on each vendor compared statement by statement (`scale-1m-plans.txt`):",
        "",
        "| call | statements | same shape | differing |",
        "|---|---|---|---|",
    ]
    for c in compared:
        lines.append(f"| {c.call} | {c.statements} | {c.same} | {'; '.join(c.differing)[:300]} |")
    lines += ["", f"{slow} statements of 10 ms or more in the timed parts: `scale-1m-explain.txt`."]
    return lines


if __name__ == "__main__":
    from loyalty_api.logs import configure_logging

    configure_logging("WARNING")
    report = run(sys.argv[1:])
    (results_dir() / "scale-1m.md").write_text(report)
    print(report)
