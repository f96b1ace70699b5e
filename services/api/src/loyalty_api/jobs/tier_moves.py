"""``tier-moves``: after a ladder's ``PUT``, one ``customer.tier_changed`` per customer it moved
(TIER-15); queued after the ``PUT`` commits, and every minute as the backstop (so within 60 s)."""

from __future__ import annotations

import structlog

from loyalty_api.jobs.context import JobContext
from loyalty_core.accounts.services.tier_moves import moving_vendors, record_moves

log = structlog.get_logger("loyalty.jobs.tier_moves")

CRON = "* * * * *"
"""Every minute: a ladder's moves are recorded within 60 seconds of its ``PUT``."""


async def tier_moves(ctx: JobContext) -> dict[str, int]:
    """Each vendor in its own transaction; a second run finds nothing left to record."""
    sessionmaker = ctx.sessionmaker
    async with sessionmaker() as session:
        vendors = await moving_vendors(session)
    recorded = failed = 0
    for vendor_id in vendors:
        try:
            async with sessionmaker.begin() as session:
                recorded += await record_moves(session, ctx.clock, vendor_id)
        except Exception as exc:  # the next run retries this vendor; the others are recorded
            failed += 1
            log.warning("tier moves not recorded", vendor_id=vendor_id, error=type(exc).__name__)
    if vendors:  # a sweep every minute: a quiet minute logs nothing of its own
        log.info("tier moves recorded", vendors=len(vendors), recorded=recorded, failed=failed)
    return {"vendors": len(vendors), "recorded": recorded, "failed": failed}
