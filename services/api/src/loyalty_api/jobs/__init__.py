"""Scheduled and queued jobs: plain functions over core, each opening its own transactions. Each takes
the worker's ``JobContext`` (``jobs.context``) first; ``jobs.hook`` runs and logs every one of them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from loyalty_api.jobs import (
    campaign_mails,
    card_mails,
    customer_imports,
    customer_moments,
    expire_points,
    ledger_totals,
    pass_updates,
    pending_points,
    prune_tokens,
    tier_moves,
    tier_review,
    webhook_deliveries,
)

JobFunction = Callable[..., Awaitable[Mapping[str, Any]]]

SCHEDULED: dict[str, tuple[JobFunction, str]] = {
    "expire-points": (expire_points.expire_points, expire_points.CRON),
    "prune-tokens": (prune_tokens.prune_tokens, prune_tokens.CRON),
    "card-mails": (card_mails.card_mails, card_mails.CRON),
    "customer-moments": (customer_moments.customer_moments, customer_moments.CRON),
    "webhook-deliveries": (webhook_deliveries.webhook_deliveries, webhook_deliveries.CRON),
    "prune-events": (webhook_deliveries.prune_old_events, webhook_deliveries.PRUNE_CRON),
    "customer-imports": (customer_imports.customer_imports, customer_imports.CRON),
    "ledger-totals": (ledger_totals.ledger_totals, ledger_totals.CRON),
    "pass-updates": (pass_updates.pass_updates, pass_updates.CRON),
    "campaign-mails": (campaign_mails.campaign_mails, campaign_mails.CRON),
    "campaign-mail-tests": (campaign_mails.campaign_mail_tests, campaign_mails.CRON),
    "pending-points": (pending_points.pending_points, pending_points.CRON),
    "tier-moves": (tier_moves.tier_moves, tier_moves.CRON),
    "tier-review": (tier_review.tier_review, tier_review.CRON),
}
"""Job name -> (function, cron). Test mode runs each by name (OPS-4)."""

QUEUED: list[JobFunction] = [
    card_mails.send_card_mail,
    webhook_deliveries.deliver_webhooks,
    customer_imports.run_customer_import,
]
"""Jobs queued by requests (after their commit), not by the clock."""
