"""Campaign mail (MAIL-6 to MAIL-9, MAIL-13 to MAIL-16): ``campaign-mails`` (every minute, and by
name in test mode, which sends what is due and waits) starts due scheduled mailings and sends every
sending mailing's due recipients a batch at a time over one SMTP connection; ``campaign-mail-tests``
sends only waiting test copies (run after a test's commit, MAIL-11).

A mailing is sent by one worker at a time: its advisory lock is held on a connection of its own
while it is sent. A recipient is marked ``sending`` in a committed transaction before its message
goes, so a run killed mid-send leaves rows ``sending`` that the next holder counts ``failed``.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_api.adapters.campaign_message import Passing, SmtpConnection, as_sent, compose
from loyalty_api.adapters.mail_sender import MailRejected, SmtpMailer
from loyalty_api.jobs.context import JobContext, needed
from loyalty_core.customers.rules import consent
from loyalty_core.mailings import jobs as work
from loyalty_core.mailings.rules import message_id, render, with_footer

log = structlog.get_logger("loyalty.jobs.campaign_mails")

CRON = "* * * * *"
SWEEP_SECONDS = 50.0
"""A run starts no batch after this long; what is left is the next minute's."""

Sender = SmtpConnection | Passing


def _sender(ctx: JobContext) -> Sender:
    mailer = needed(ctx.mailer, "a mailer")
    if isinstance(mailer, SmtpMailer):
        return SmtpConnection(mailer.host, mailer.port)
    return Passing(mailer)


async def campaign_mails(ctx: JobContext, *, budget: float = SWEEP_SECONDS) -> dict[str, int]:
    async with ctx.sessionmaker.begin() as session:
        started = await work.start_due(session, ctx.clock.now())
    done = await _send_all(ctx, budget, members=True)
    done["started"] = len(started)
    return dict(done)


async def campaign_mail_tests(ctx: JobContext, *, budget: float = SWEEP_SECONDS) -> dict[str, int]:
    return dict(await _send_all(ctx, budget, members=False))


async def _send_all(ctx: JobContext, budget: float, *, members: bool) -> Counter[str]:
    async with ctx.sessionmaker() as session:
        todo = await work.sending(session)
    outcomes: Counter[str] = Counter()
    stop_at = asyncio.get_running_loop().time() + budget
    sender = _sender(ctx)
    try:
        for vendor_id, mailing_id in todo:
            await _send_mailing(ctx, sender, vendor_id, mailing_id, outcomes, stop_at, members=members)
    finally:
        await sender.close()
    return outcomes


def _engine(ctx: JobContext) -> AsyncEngine:
    bind: Any = ctx.sessionmaker.kw["bind"]
    assert isinstance(bind, AsyncEngine)
    return bind


async def _send_mailing(
    ctx: JobContext,
    sender: Sender,
    vendor_id: int,
    mailing_id: int,
    outcomes: Counter[str],
    stop_at: float,
    *,
    members: bool,
) -> None:
    loop = asyncio.get_running_loop()
    async with _engine(ctx).connect() as connection:
        holder = await connection.execution_options(isolation_level="AUTOCOMMIT")
        if not await work.try_lock(holder, mailing_id):
            outcomes["busy"] += 1  # another worker sends it
            return
        try:
            async with ctx.sessionmaker.begin() as session:
                outcomes["failed"] += await work.fail_interrupted(session, vendor_id, mailing_id, ctx.clock.now())
            while loop.time() < stop_at:
                async with ctx.sessionmaker.begin() as session:
                    batch = await work.claim(
                        session, vendor_id, mailing_id, ctx.clock.now(), work.BATCH, members=members
                    )
                if not batch:
                    break
                results = [await _deliver(ctx, sender, outgoing) for outgoing in batch]
                for result in results:
                    outcomes["sent" if result.sent else "failed" if result.final else "retrying"] += 1
                async with ctx.sessionmaker.begin() as session:
                    await work.record(session, vendor_id, results, ctx.clock.now())
                if not any(r.sent or r.final for r in results):
                    break  # the server takes nothing now: the rest waits for the next run, not a timeout each
            async with ctx.sessionmaker.begin() as session:
                await work.finish(session, vendor_id, mailing_id, ctx.clock.now())
        finally:
            await work.unlock(holder, mailing_id)


def _domain(sender: str) -> str:
    domain = sender.rsplit("@", 1)[-1].strip(" >")
    return domain if "@" in sender and domain else "loyalty.local"


async def _deliver(ctx: JobContext, sender: Sender, outgoing: work.Outgoing) -> work.Outcome:
    mail_from = needed(ctx.mail_from, "the mails' From address")
    if outgoing.customer_id is None:
        url = f"{ctx.public_url}/unsubscribe/test-copy"  # a test copy withdraws nobody's consent (MAIL-11)
    else:
        key = needed(ctx.unsubscribe_key, "the unsubscribe links' key")
        url = f"{ctx.public_url}/unsubscribe/{consent.unsubscribe_token(key, outgoing.vendor_id, outgoing.customer_id)}"
    now = ctx.clock.now()
    try:
        message = compose(
            shop_name=outgoing.shop_name,
            sender=mail_from,
            to=outgoing.to,
            subject=outgoing.subject,
            text=with_footer(render(outgoing.body, outgoing.facts), url),
            message_id=message_id(outgoing.mailing_id, outgoing.recipient_id, _domain(mail_from)),
            unsubscribe_url=url,
            now=now,
        )
        await sender.deliver(message)
    except MailRejected as rejected:
        log.warning("campaign message refused", recipient_id=outgoing.recipient_id, answer=str(rejected))
        return work.Outcome(outgoing.recipient_id, sent=False, final=True)
    except (ValueError, TypeError) as unbuildable:  # an address no header can carry: retrying will not help
        log.warning("campaign message not built", recipient_id=outgoing.recipient_id, error=type(unbuildable).__name__)
        return work.Outcome(outgoing.recipient_id, sent=False, final=True)
    except Exception as exc:  # not taken this time: retried with back-off (MAIL-16)
        log.info("campaign message not taken yet", recipient_id=outgoing.recipient_id, error=type(exc).__name__)
        return work.Outcome(outgoing.recipient_id, sent=False)
    return work.Outcome(outgoing.recipient_id, sent=True, raw=as_sent(message) if ctx.keep_raw else None)
