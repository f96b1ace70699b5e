"""``ledger-totals``: fold the ledger's new entries into its daily totals (TOTALS-1, TOTALS-2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_core.wallet.folding import fold_ledger

log = structlog.get_logger("loyalty.jobs.ledger_totals")

CRON = "* * * * *"
"""Every minute: the reads add the entries not folded yet, so this keeps that tail a minute or two
of writes long."""


async def ledger_totals(ctx: Mapping[str, Any]) -> dict[str, int]:
    sessionmaker: async_sessionmaker[AsyncSession] = ctx["sessionmaker"]
    fold = await fold_ledger(sessionmaker)
    log.info(
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
