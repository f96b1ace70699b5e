"""``ledger-totals``: fold the ledger's new entries into its daily totals (TOTALS-1, TOTALS-2)."""

from __future__ import annotations

import structlog

from loyalty_api.jobs.context import JobContext
from loyalty_core.wallet.jobs import fold_ledger

log = structlog.get_logger("loyalty.jobs.ledger_totals")

CRON = "* * * * *"
"""Every minute: the reads add the entries not folded yet, so this keeps that tail a minute or two
of writes long."""


async def ledger_totals(ctx: JobContext) -> dict[str, int]:
    fold = await fold_ledger(ctx.sessionmaker)
    # the hook's line says the run happened; what it folded is for debugging
    log.debug(
        "ledger folded",
        entries=fold.entries,
        folded_through=fold.folded_through,
        pending_through=fold.pending_through,
        waiting=fold.waiting,
    )
    return {
        "entries": fold.entries,
        "folded_through": fold.folded_through,
        "pending_through": fold.pending_through or 0,
        "waiting": int(fold.waiting),
    }
