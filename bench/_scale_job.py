"""One job of the service run on its own in this process, as the worker runs it:
``python -m bench._scale_job NAME URL``. Prints one JSON line: the job's answer, its seconds and the
process's peak resident memory, so ``bench scale`` measures each job's memory alone."""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time
from typing import Any


async def _run(name: str, url: str) -> dict[str, Any]:
    from loyalty_api.jobs.context import JobContext
    from loyalty_api.jobs.customer_imports import customer_imports
    from loyalty_api.jobs.customer_moments import customer_moments
    from loyalty_api.jobs.expire_points import expire_points
    from loyalty_api.jobs.hook import run_now
    from loyalty_api.jobs.ledger_totals import ledger_totals
    from loyalty_api.jobs.prune_tokens import prune_tokens
    from loyalty_api.jobs.webhook_deliveries import prune_old_events
    from loyalty_core.clock import SystemClock
    from loyalty_core.db import make_engine, make_sessionmaker

    jobs = {
        "expire-points": expire_points,
        "customer-moments": customer_moments,
        "ledger-totals": ledger_totals,
        "prune-events": prune_old_events,
        "prune-tokens": prune_tokens,
        "customer-imports": customer_imports,
    }
    engine = make_engine(url)
    try:
        context = JobContext(sessionmaker=make_sessionmaker(engine), clock=SystemClock())
        began = time.perf_counter()
        answer = await run_now(jobs[name], context)
        return {"answer": dict(answer), "seconds": time.perf_counter() - began}
    finally:
        await engine.dispose()


def main(argv: list[str]) -> int:
    name, url = argv
    out = asyncio.run(_run(name, url))
    # Linux reports ru_maxrss in KiB
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out, default=str), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
