"""Card mails: ``send_card_mail`` (queued after a send-card commits) and ``card-mails`` (every
minute, and by name in test mode), which delivers every queued mail whose time has come, so a
crash between the commit and the enqueue, or a job that ran out of retries, loses nothing.

Each delivery holds the mail's row lock from the claim to the status update, so two workers never
send one mail at the same time; a crash after the SMTP server took the mail and before the commit
sends it again with the same Message-ID (the only repeat possible, and a recognisable one). A
cancelled job (SAQ's timeout, a stopping worker) is no crash: the delivery in hand runs on to its
commit, so a mail the server took is recorded as sent.
"""

from __future__ import annotations

import asyncio
from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_api.adapters.card_message import compose
from loyalty_api.adapters.mail_sender import MailRejected
from loyalty_api.jobs.context import JobContext, needed
from loyalty_core.clock import Clock
from loyalty_core.errors import DomainError
from loyalty_core.passes.cards import PassCards
from loyalty_core.passes.errors import PlatformAWalletUnavailable
from loyalty_core.passes.outbox import Outbox

log = structlog.get_logger("loyalty.jobs.card_mails")

CRON = "* * * * *"
"""Every minute: the sweep for mails whose enqueue was lost or whose back-off has run out."""
JOB = "send_card_mail"
RETRIES = 5
RETRY_DELAY_SECONDS = 1.0
MAX_RETRY_DELAY_SECONDS = 60.0
SWEEP_SECONDS = 40.0
"""A sweep starts no delivery after this long; what is left is the next minute's. Deliveries take
from a fraction of a second to a minute each (SMTP_TIMEOUT_SECONDS per step), so a backlog would
otherwise outlast any timeout the sweep's job could have."""


def job_options(card_mail_id: int) -> dict[str, Any]:
    """How a send-card's mail is queued: keyed by its row (a second enqueue of it is a no-op while it
    waits), retried by SAQ with back-off when sending fails."""
    return {
        "card_mail_id": card_mail_id,
        "key": f"card-mail:{card_mail_id}",
        "retries": RETRIES,
        "retry_delay": RETRY_DELAY_SECONDS,
        "retry_backoff": MAX_RETRY_DELAY_SECONDS,
        "timeout": 120,
    }


async def send_card_mail(ctx: JobContext, *, card_mail_id: int) -> dict[str, str]:
    return {"outcome": await deliver(ctx, card_mail_id)}


async def card_mails(ctx: JobContext, *, budget: float = SWEEP_SECONDS) -> dict[str, int]:
    async with ctx.sessionmaker() as session:
        due = await Outbox(session, ctx.clock).due()
    outcomes: dict[str, int] = {}
    loop = asyncio.get_running_loop()
    stop_at = loop.time() + budget
    for mail_id in due:
        if loop.time() >= stop_at:
            outcomes["left"] = outcomes.get("left", 0) + 1
            continue
        try:
            outcome = await deliver(ctx, mail_id)
        except Exception as exc:  # this mail waits for its back-off; the others go on
            log.warning("card mail not delivered yet", card_mail_id=mail_id, error=type(exc).__name__)
            outcome = "retrying"
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return outcomes


_in_hand: set[asyncio.Future[str]] = set()
"""Deliveries whose job was cancelled, kept referenced until they finish."""


async def deliver(ctx: JobContext, mail_id: int) -> str:
    """Deliver one queued mail: ``sent`` or ``written``; ``waiting`` for the shop's identity;
    ``failed`` when the customer can no longer get it, the SMTP server refused it for good, or it
    could not be built or sent after its attempts; ``skipped`` when it is delivered already or
    another worker holds it. A send that failed this time is postponed and raised, for SAQ to retry.

    Shielded from cancellation: cancelled mid-SMTP, the attempt would roll back after the server took
    the mail, and the next attempt would send it again. The caller's cancellation still goes through
    at once; the attempt finishes on its own."""
    attempt = asyncio.ensure_future(_attempt(ctx, mail_id))
    _in_hand.add(attempt)
    attempt.add_done_callback(_finished)
    return await asyncio.shield(attempt)


def _finished(attempt: asyncio.Future[str]) -> None:
    _in_hand.discard(attempt)
    if not attempt.cancelled():
        attempt.exception()  # read here too: a caller cancelled meanwhile never reads it (it was postponed)


async def _attempt(ctx: JobContext, mail_id: int) -> str:
    sessionmaker, clock = ctx.sessionmaker, ctx.clock
    try:
        async with sessionmaker() as session, session.begin():
            return await _deliver_locked(ctx, session, clock, mail_id)
    except Exception as exc:
        async with sessionmaker() as session, session.begin():
            gave_up = await Outbox(session, clock).failed_attempt(mail_id)
        if not gave_up:
            raise
        # a mail that cannot be built (a header it cannot carry) or sent after its attempts ends here
        log.warning("card mail failed after its attempts", card_mail_id=mail_id, error=type(exc).__name__)
        return "failed"


async def _deliver_locked(ctx: JobContext, session: AsyncSession, clock: Clock, mail_id: int) -> str:
    passes = needed(ctx.passes, "the pass maker")
    mailer = needed(ctx.mailer, "a mailer")
    outbox = Outbox(session, clock)
    mail = await outbox.claim(mail_id)
    if mail is None:
        return "skipped"
    cards = PassCards(session, clock)
    try:
        _, card = await cards.for_pass(mail.vendor_id, mail.customer_id)
    except DomainError as gone:  # anonymized, merged, or without a card since the 202
        log.info("card mail dropped", card_mail_id=mail_id, reason=gone.code)
        await outbox.mark_failed(mail)
        return "failed"
    try:
        pkpass: bytes | None = await passes.pkpass(session, clock, card)
    except PlatformAWalletUnavailable:
        if outbox.must_wait_for_identity(mail):
            await outbox.postpone(mail_id)
            return "waiting"
        pkpass = None  # waited a day: goes without the pass file, and says so
    now = clock.now()
    composed = compose(
        card,
        to=mail.to_address,
        sender=needed(ctx.mail_from, "the mails' From address"),
        message_id=mail.message_id,
        save_url=passes.save_url(card, now),
        pkpass=pkpass,
        now=now,
    )
    try:
        status = await mailer.deliver(composed.message)
    except MailRejected as rejected:  # a 5xx: retrying would only be refused again
        log.warning("card mail refused by the mail server", card_mail_id=mail_id, answer=str(rejected))
        await outbox.mark_failed(mail)
        return "failed"
    await outbox.mark_delivered(mail, status=status, subject=composed.subject, attachments=composed.attachments)
    log.info("card mail delivered", card_mail_id=mail_id, status=str(status), with_pass=pkpass is not None)
    return str(status)
