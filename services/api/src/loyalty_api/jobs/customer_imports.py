"""Customer imports of the portal: ``run_customer_import`` (queued when an owner chooses Import)
and ``customer-imports`` (every minute, and by name in test mode), which runs every queued import
and takes up one whose worker went away, so a lost hand-over or a crash loses nothing
(CUSTOMER-15), and removes the uploads checked but never imported past their age (PORTAL-9). The
work itself is ``loyalty_core.accounts.jobs.imports.run_import``: one transaction per chunk of rows,
the job's progress written with each."""

from __future__ import annotations

import asyncio
from typing import Any

from loyalty_api.jobs.context import JobContext
from loyalty_core.accounts.jobs.imports import ImportJobs, run_import

CRON = "* * * * *"
JOB = "run_customer_import"


def job_options(job_id: int) -> dict[str, Any]:
    """Keyed by the job, so a second enqueue of it is a no-op while it waits; a long file runs long."""
    return {"job_id": job_id, "key": f"customer-import:{job_id}", "timeout": 3600}


async def run_customer_import(ctx: JobContext, *, job_id: int) -> dict[str, str]:
    return {"state": await run_import(ctx.sessionmaker, ctx.clock, job_id)}


async def customer_imports(ctx: JobContext) -> dict[str, int]:
    sessionmaker, clock = ctx.sessionmaker, ctx.clock
    async with sessionmaker() as session:
        due = await ImportJobs(session, clock).due()
        discarded = await ImportJobs(session, clock).discard_unimported()
        await session.commit()
    for path in discarded:  # after the commit: a job row never names a file that is gone
        await asyncio.to_thread(path.unlink, missing_ok=True)
    outcomes: dict[str, int] = {"discarded": len(discarded)} if discarded else {}
    for job_id in due:
        state = await run_import(sessionmaker, clock, job_id)
        outcomes[state] = outcomes.get(state, 0) + 1
    return outcomes
