"""``tier-review``: the lapses the clock made since the last review, one ``customer.tier_changed``
each (TIER-17); hourly."""

from __future__ import annotations

import structlog

from loyalty_api.jobs.context import JobContext
from loyalty_core.accounts.services.tier_moves import record_lapses, reviewed_vendors

log = structlog.get_logger("loyalty.jobs.tier_review")

CRON = "5 * * * *"
"""Hourly, five minutes past: a tier lapses at the first instant of a month."""


async def tier_review(ctx: JobContext) -> dict[str, int]:
    """Each vendor in its own transaction; a second run in the same instant records nothing."""
    sessionmaker = ctx.sessionmaker
    async with sessionmaker() as session:
        vendors = await reviewed_vendors(session)
    recorded = failed = 0
    for vendor_id in vendors:
        try:
            async with sessionmaker.begin() as session:
                recorded += await record_lapses(session, ctx.clock, vendor_id)
        except Exception as exc:  # the next run retries this vendor; the others are recorded
            failed += 1
            log.warning("tier lapses not recorded", vendor_id=vendor_id, error=type(exc).__name__)
    log.info("tier lapses recorded", vendors=len(vendors), recorded=recorded, failed=failed)
    return {"vendors": len(vendors), "recorded": recorded, "failed": failed}
