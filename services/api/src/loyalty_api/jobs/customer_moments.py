"""``customer-moments``: record the customer moments due today (EARN-10)."""

from __future__ import annotations

import structlog

from loyalty_api.jobs.context import JobContext
from loyalty_core.earning.jobs import moment_vendors, record_due

log = structlog.get_logger("loyalty.jobs.customer_moments")

CRON = "15 0 * * *"
"""Daily, a quarter past midnight UTC: a birthday is due from its first minute."""


async def customer_moments(ctx: JobContext) -> dict[str, int]:
    """Each vendor in its own transaction, so one vendor's trouble leaves the others recorded; a
    second run for the same day records nothing new."""
    sessionmaker = ctx.sessionmaker
    now = ctx.clock.now()
    async with sessionmaker() as session:
        vendors = await moment_vendors(session, now.date())
    recorded = failed = 0
    for vendor_id in vendors:
        try:
            async with sessionmaker.begin() as session:
                recorded += await record_due(session, vendor_id, now)
        except Exception as exc:  # the next run retries this vendor; the others are recorded
            failed += 1
            log.warning("moments not recorded", vendor_id=vendor_id, error=type(exc).__name__)
    log.info("customer moments recorded", vendors=len(vendors), recorded=recorded, failed=failed, at=now.isoformat())
    return {"vendors": len(vendors), "recorded": recorded, "failed": failed}
