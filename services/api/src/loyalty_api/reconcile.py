"""``loyalty vendors reconcile ID``: the job-free check of the liability report (LIABILITY-4, LIABILITY-8).

For every month of the vendor, from its first ledger entry to now, the report's ``closing`` (read
from the folded totals, the entries above the watermark and the lots that ended without an entry)
is compared with the sum of the vendor's wallet balances at the month's end recomputed from the
entries and the lots alone. Prints one line per month and every difference; exits 1 when a month
differs, 0 when all reconcile. Reads the database directly (``DATABASE_URL``, or the embedded one):
it needs no running service and no job.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import date, datetime

from sqlalchemy import text

from loyalty_core.clock import SystemClock
from loyalty_core.db import make_engine, make_sessionmaker
from loyalty_core.tenancy.models import Vendor
from loyalty_core.wallet.liability import (
    MAX_MONTHS,
    Difference,
    MonthFigures,
    add_months,
    liability_report,
    month_of,
    reconcile,
)

# the first entry, or the first pending points that became available before any entry was written
# (LIABILITY-7): they count from that month on
_FIRST = """
SELECT least((SELECT min(created_at) FROM ledger_entries WHERE vendor_id = :vendor_id),
             (SELECT min(available_at) FROM pending_points WHERE vendor_id = :vendor_id))
"""


async def reconcile_vendor(database_url: str, vendor_id: int, now: datetime | None = None) -> int:
    """Print every month's closing beside the recomputed balances; 0 when all agree, 1 when one
    differs, 2 when there is no such vendor."""
    engine = make_engine(database_url)
    try:
        async with make_sessionmaker(engine)() as session:
            vendor = await session.get(Vendor, vendor_id)
            if vendor is None:
                print(f"loyalty: no vendor {vendor_id}", file=sys.stderr)
                return 2
            at = now or SystemClock().now()
            first_entry = (await session.execute(text(_FIRST), {"vendor_id": vendor_id})).scalar_one_or_none()
            first = month_of(min(first_entry, at)) if first_entry is not None else month_of(at)
            rows: list[MonthFigures] = []
            differences: list[Difference] = []
            start = first
            while start <= month_of(at):
                last = min(add_months(start, MAX_MONTHS - 1), month_of(at))
                report = await liability_report(session, vendor_id, vendor.point_value_millicents, start, last, at)
                rows.extend(report.months)
                differences.extend(await reconcile(session, report, vendor_id, at))
                start = add_months(last, 1)
    finally:
        await engine.dispose()
    return _print(vendor_id, rows, differences)


def _print(vendor_id: int, rows: list[MonthFigures], differences: list[Difference]) -> int:
    differing: dict[date, Difference] = {d.month: d for d in differences}
    print(f"{'month':<8}  {'closing':>16}  {'balances':>16}  difference")
    for row in rows:
        found = differing.get(row.month)
        balances = row.closing if found is None else found.balances
        gap = "" if found is None else str(row.closing - balances)
        print(f"{row.month:%Y-%m}  {row.closing:>16}  {balances:>16}  {gap}")
    if differences:
        print(f"vendor {vendor_id}: {len(differences)} of {len(rows)} months differ", file=sys.stderr)
        return 1
    print(f"vendor {vendor_id}: all {len(rows)} months reconcile")
    return 0


def run(database_url: str, vendor_id: int) -> int:
    return asyncio.run(reconcile_vendor(database_url, vendor_id))
