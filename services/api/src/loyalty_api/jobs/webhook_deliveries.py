"""Webhook deliveries: ``deliver_webhooks`` (queued after a commit that recorded events) and
``webhook-deliveries`` (every minute, and by name in test mode), which send every pending delivery
whose time has come, so a crash between the commit and the enqueue, or a worker killed mid-send,
loses nothing; ``prune-events`` (daily) deletes events older than 30 days.

Each attempt holds its delivery's row lock from the claim to the recorded outcome, so two workers
never send one attempt at the same time. A worker killed after the receiver took the request and
before the commit leaves the row pending: it is sent again with the same event id (delivery is at
least once; receivers de-duplicate by event id).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import msgspec
import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_api.webhook_delivery import Sender, signature
from loyalty_core.clock import Clock
from loyalty_core.events.deliveries import Deliveries, Outcome
from loyalty_core.events.endpoints import Sealer, signing_secrets
from loyalty_core.events.feed import event_body, prune_events

log = structlog.get_logger("loyalty.jobs.webhooks")

CRON = "* * * * *"
"""Every minute: retries whose time has come, and deliveries whose wake-up was lost."""
PRUNE_CRON = "50 0 * * *"
JOB = "deliver_webhooks"
CONCURRENCY = 8
SWEEP_SECONDS = 40.0
"""A sweep starts no attempt after this long; what is left is the next minute's (each attempt takes
at most 10 seconds)."""


def job_options() -> dict[str, Any]:
    """One wake-up waits in the queue at a time: it sends everything due, however many commits woke it."""
    return {"key": "webhook-deliveries", "timeout": 120}


async def deliver_webhooks(ctx: Mapping[str, Any]) -> dict[str, int]:
    return await webhook_deliveries(ctx)


async def webhook_deliveries(ctx: Mapping[str, Any], *, budget: float = SWEEP_SECONDS) -> dict[str, int]:
    sessionmaker: async_sessionmaker[AsyncSession] = ctx["sessionmaker"]
    clock: Clock = ctx["clock"]
    outcomes: dict[str, int] = {}
    loop = asyncio.get_running_loop()
    stop_at = loop.time() + budget
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(vendor_id: int, delivery_id: int) -> None:
        async with gate:
            if loop.time() >= stop_at:
                outcome = "left"
            else:
                try:
                    outcome = await attempt(ctx, vendor_id, delivery_id)
                except Exception as exc:  # this delivery stays pending; the others go on
                    log.warning("webhook delivery not recorded", delivery_id=delivery_id, error=type(exc).__name__)
                    outcome = "error"
            outcomes[outcome] = outcomes.get(outcome, 0) + 1

    while loop.time() < stop_at:
        async with sessionmaker() as session:
            due = await Deliveries(session, clock).due()
        if not due:
            break
        before = dict(outcomes)
        await asyncio.gather(*(one(v, d) for v, d in due))
        made = sum(outcomes.get(k, 0) - before.get(k, 0) for k in ("succeeded", "failed"))
        if made == 0:  # everything due is held by another worker or failed to record
            break
    return outcomes


async def attempt(ctx: Mapping[str, Any], vendor_id: int, delivery_id: int) -> str:
    """Make one attempt: ``succeeded``, ``failed`` or ``skipped`` (made already, or held elsewhere)."""
    sessionmaker: async_sessionmaker[AsyncSession] = ctx["sessionmaker"]
    clock: Clock = ctx["clock"]
    sealer: Sealer = ctx["webhook_sealer"]
    sender: Sender = ctx["webhook_sender"]
    async with sessionmaker() as session, session.begin():
        deliveries = Deliveries(session, clock)
        claimed = await deliveries.claim(vendor_id, delivery_id)
        if claimed is None:
            return "skipped"
        delivery, endpoint = claimed
        event = await event_body(session, vendor_id, delivery.event_id)
        if event is None:  # pruned meanwhile: nothing left to send
            await deliveries.settle(delivery, endpoint, Outcome(False, None, 0, "The event no longer exists."))
            return "failed"
        body = msgspec.json.encode(
            {"id": event["id"], "type": event["type"], "created_at": event["created_at"], "data": event["data"]}
        )
        now = clock.now()
        headers = {
            "Content-Type": "application/json",
            "Loyalty-Event-Id": event["id"],
            "Loyalty-Event-Type": event["type"],
            "Loyalty-Signature": signature(body, signing_secrets(endpoint, sealer, now), now),
        }
        outcome = await sender.post(endpoint.url, body, headers)
        await deliveries.settle(delivery, endpoint, outcome)
    result = "succeeded" if outcome.succeeded else "failed"
    log.info("webhook attempt", delivery_id=delivery_id, attempt=delivery.attempt, outcome=result)
    return result


async def prune_old_events(ctx: Mapping[str, Any]) -> dict[str, int]:
    sessionmaker: async_sessionmaker[AsyncSession] = ctx["sessionmaker"]
    clock: Clock = ctx["clock"]
    now = clock.now()
    deleted = 0
    while True:
        async with sessionmaker.begin() as session:
            batch = await prune_events(session, now)
        deleted += batch
        if batch == 0:
            break
    log.info("old events pruned", events=deleted, at=now.isoformat())
    return {"events": deleted}
