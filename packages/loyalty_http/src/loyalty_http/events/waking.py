"""Waking the webhook delivery worker after a till's write (EVENT-7).

The till's psycopg paths commit on their own, outside the ORM session whose commit wakes the worker
(``params.provide_db``), so they wake it here once their statement has committed. Their statement
counts the deliveries its events created: a shop without endpoints (most) costs nothing more.
"""

from __future__ import annotations

import structlog

from loyalty_http.config import HttpConfig

log = structlog.get_logger("loyalty.http")


async def wake_deliveries(config: HttpConfig, deliveries: int) -> None:
    """After the commit of a write whose events created ``deliveries`` pending deliveries."""
    if not deliveries or config.enqueue_webhooks is None:
        return
    try:
        await config.enqueue_webhooks()
    except Exception as exc:  # the sweep sends them a minute later; the committed answer stands
        log.warning("waking the webhook worker failed", error=type(exc).__name__)
