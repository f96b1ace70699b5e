"""Webhook deliveries: ``deliver_webhooks`` (queued after a commit that recorded events) and
``webhook-deliveries`` (every minute, and by name in test mode), which send every pending delivery
whose time has come, so a crash between the commit and the enqueue, or a worker killed mid-send,
loses nothing; ``prune-events`` (daily) deletes events older than 30 days.

Each attempt is claimed by a lease (``loyalty_core.events.jobs``), so two workers never send
one attempt at the same time and no database connection waits on a receiver. A worker killed after
the receiver took the request and before the outcome was recorded leaves the row pending: it is sent
again, with the same event id, once the lease ends (delivery is at least once; receivers
de-duplicate by event id).

A worker (EVENT-9) sends up to ``LOYALTY_WEBHOOK_CONCURRENCY`` attempts at once, at most
``LOYALTY_WEBHOOK_ENDPOINT_CONCURRENCY`` of them to one endpoint, so a receiver that answers slowly
(or not at all, until the 10-second cut) holds only its own share of the slots and the other shops'
deliveries go on beside it (``webhook_gates``). A run keeps its slots filled: it reads what is due
again as attempts finish, rather than waiting for a whole batch.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import structlog

from loyalty_api.adapters.webhook_sender import signature
from loyalty_api.jobs.context import JobContext, needed
from loyalty_api.jobs.pruning import prune_in_batches
from loyalty_core.events.jobs import PRUNE_BATCH, Deliveries, Outcome, prune_events
from loyalty_core.events.reads import event_body
from loyalty_core.events.services.endpoints import signing_secrets
from loyalty_core.shown_events import shown_data

log = structlog.get_logger("loyalty.jobs.webhooks")

CRON = "* * * * *"
"""Every minute: retries whose time has come, and deliveries whose wake-up was lost."""
PRUNE_CRON = "50 0 * * *"
JOB = "deliver_webhooks"
REFILL_SECONDS = 0.1
"""A run reads what is due at most this often while attempts are in flight."""
PER_ENDPOINT_READ = 100
"""A read of what is due takes at most this many of one endpoint's oldest (and 1,000 in all)."""
SWEEP_SECONDS = 40.0
"""A sweep starts no attempt after this long; what is left is the next minute's (each attempt takes
at most 10 seconds)."""


def job_options() -> dict[str, Any]:
    """One wake-up waits in the queue at a time: it sends everything due, however many commits woke it."""
    return {"key": "webhook-deliveries", "timeout": 120}


async def deliver_webhooks(ctx: JobContext) -> dict[str, int]:
    return await webhook_deliveries(ctx)


async def webhook_deliveries(ctx: JobContext, *, budget: float = SWEEP_SECONDS) -> dict[str, int]:
    sessionmaker, clock, gates = ctx.sessionmaker, ctx.clock, ctx.webhook_gates
    outcomes: dict[str, int] = {}
    loop = asyncio.get_running_loop()
    stop_at = loop.time() + budget
    launched: set[tuple[int, int]] = set()
    running: set[asyncio.Task[None]] = set()

    async def one(vendor_id: int, delivery_id: int, endpoint_id: int) -> None:
        async with gates.slot(vendor_id, endpoint_id):
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
        # at most PER_ENDPOINT_READ of each endpoint, so a long backlog of one never hides another's
        async with sessionmaker() as session:
            due = await Deliveries(session, clock).due(limit=1000, per_endpoint=PER_ENDPOINT_READ)
        fresh = [(v, d, e) for v, d, e in due if (v, d) not in launched]
        for vendor_id, delivery_id, endpoint_id in fresh:
            launched.add((vendor_id, delivery_id))
            task = asyncio.create_task(one(vendor_id, delivery_id, endpoint_id))
            running.add(task)
            task.add_done_callback(running.discard)
        if not running:  # nothing due that this run has not tried already
            break
        # read again once a slot is free, no more often than REFILL_SECONDS
        await asyncio.sleep(REFILL_SECONDS)
        while running and gates.busy >= gates.total and loop.time() < stop_at:
            await asyncio.wait(running, timeout=1.0, return_when=asyncio.FIRST_COMPLETED)
    if running:
        await asyncio.gather(*running)
    return outcomes


async def attempt(ctx: JobContext, vendor_id: int, delivery_id: int) -> str:
    """Make one attempt: ``succeeded``, ``failed`` or ``skipped`` (made already, or held elsewhere).
    The claim and the outcome are two short transactions; the send happens between them."""
    sessionmaker, clock = ctx.sessionmaker, ctx.clock
    sealer = needed(ctx.webhook_sealer, "the webhook sealer")
    sender = needed(ctx.webhook_sender, "the webhook sender")
    async with sessionmaker() as session, session.begin():
        deliveries = Deliveries(session, clock)
        claimed = await deliveries.claim(vendor_id, delivery_id)
        if claimed is None:
            return "skipped"
        event = await event_body(session, vendor_id, claimed.delivery.event_id)
        if event is None:  # pruned meanwhile: nothing left to send
            await deliveries.settle(claimed, Outcome(False, None, 0, "The event no longer exists."))
            return "failed"
        now = clock.now()
        data = shown_data(event["type"], event["payload_version"], event["data"], event["created_at"])
        body = msgspec.json.encode(
            {"id": event["id"], "type": event["type"], "created_at": event["created_at"], "data": data}
        )
        headers = {
            "Content-Type": "application/json",
            "Loyalty-Event-Id": event["id"],
            "Loyalty-Event-Type": event["type"],
            "Loyalty-Signature": signature(body, signing_secrets(claimed.endpoint, sealer, now), now),
        }
    outcome = await sender.post(claimed.endpoint.url, body, headers)
    async with sessionmaker() as session, session.begin():
        recorded = await Deliveries(session, clock).settle(claimed, outcome)
    if not recorded:  # the lease ran out and another worker took the attempt over
        log.warning("webhook attempt outlived its lease", delivery_id=delivery_id)
        return "lost"
    result = "succeeded" if outcome.succeeded else "failed"
    log.info("webhook attempt", delivery_id=delivery_id, attempt=claimed.delivery.attempt, outcome=result)
    return result


async def prune_old_events(ctx: JobContext) -> dict[str, int]:
    deleted, now = await prune_in_batches(ctx, prune_events, PRUNE_BATCH)
    log.info("old events pruned", events=deleted, at=now.isoformat())
    return {"events": deleted}
