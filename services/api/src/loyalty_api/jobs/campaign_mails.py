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
from datetime import datetime
from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_api.adapters.campaign_message import Letter, Letterhead
from loyalty_api.adapters.campaign_smtp import Delivery, Handed, Passing, SmtpConnection
from loyalty_api.adapters.mail_sender import SmtpMailer
from loyalty_api.jobs.context import JobContext, needed
from loyalty_core.customers.rules import consent
from loyalty_core.mailings import jobs as work
from loyalty_core.mailings.rules import Template, message_id, with_footer

log = structlog.get_logger("loyalty.jobs.campaign_mails")

CRON = "* * * * *"
SWEEP_SECONDS = 50.0
"""A run starts no batch after this long; what is left is the next minute's."""
PACE = 250.0
"""Messages a second at most, per mailing being sent: unpaced, the sender and a local SMTP server
beside the till took enough CPU to stretch its p99 past 1.5x (bench/results/mailings.md); 250 a
second is 900,000 an hour."""

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
    parts = _Parts(ctx, shortcut=isinstance(sender, SmtpConnection))
    async with _engine(ctx).connect() as connection:
        holder = await connection.execution_options(isolation_level="AUTOCOMMIT")
        if not await work.try_lock(holder, mailing_id):
            outcomes["busy"] += 1  # another worker sends it
            return
        try:
            async with ctx.sessionmaker.begin() as session:
                outcomes["failed"] += await work.fail_interrupted(session, vendor_id, mailing_id, ctx.clock.now())
            while loop.time() < stop_at:
                began = loop.time()
                async with ctx.sessionmaker.begin() as session:
                    batch = await work.claim(
                        session, vendor_id, mailing_id, ctx.clock.now(), work.BATCH, members=members
                    )
                if not batch:
                    break
                results = await _deliver(ctx, sender, batch, parts)
                for result in results:
                    outcomes["sent" if result.sent else "failed" if result.final else "retrying"] += 1
                async with ctx.sessionmaker.begin() as session:
                    await work.record(session, vendor_id, results, ctx.clock.now())
                if not any(r.sent or r.final for r in results):
                    break  # the server takes nothing now: the rest waits for the next run, not a timeout each
                await asyncio.sleep(max(0.0, began + len(batch) / PACE - loop.time()))
            async with ctx.sessionmaker.begin() as session:
                await work.finish(session, vendor_id, mailing_id, ctx.clock.now())
        finally:
            await work.unlock(holder, mailing_id)


def _domain(sender: str) -> str:
    domain = sender.rsplit("@", 1)[-1].strip(" >")
    return domain if "@" in sender and domain else "loyalty.local"


class _Parts:
    """What a mailing's messages share, made once while it is sent: its letterhead and its body's
    template (a test copy and the members' messages share them too)."""

    def __init__(self, ctx: JobContext, *, shortcut: bool) -> None:
        self._ctx, self._shortcut = ctx, shortcut
        self._made: dict[tuple[str, str, str], tuple[Letterhead, Template]] = {}

    @property
    def mail_from(self) -> str:
        return needed(self._ctx.mail_from, "the mails' From address")

    def of(self, outgoing: work.Outgoing) -> tuple[Letterhead, Template]:
        key = (outgoing.shop_name, outgoing.subject, outgoing.body)
        made = self._made.get(key)
        if made is None:
            head = Letterhead(
                shop_name=outgoing.shop_name, sender=self.mail_from, subject=outgoing.subject, shortcut=self._shortcut
            )
            made = self._made[key] = (head, Template.of(outgoing.body))
        return made


def _letter(ctx: JobContext, parts: _Parts, outgoing: work.Outgoing, now: datetime) -> Letter:
    if outgoing.customer_id is None:
        url = f"{ctx.public_url}/unsubscribe/test-copy"  # a test copy withdraws nobody's consent (MAIL-11)
    else:
        key = needed(ctx.unsubscribe_key, "the unsubscribe links' key")
        url = f"{ctx.public_url}/unsubscribe/{consent.unsubscribe_token(key, outgoing.vendor_id, outgoing.customer_id)}"
    head, template = parts.of(outgoing)
    return head.letter(
        to=outgoing.to,
        text=with_footer(template.fill(outgoing.facts), url),
        message_id=message_id(outgoing.mailing_id, outgoing.recipient_id, _domain(parts.mail_from)),
        unsubscribe_url=url,
        now=now,
    )


async def _deliver(ctx: JobContext, sender: Sender, batch: list[work.Outgoing], parts: _Parts) -> list[work.Outcome]:
    """The batch's messages built, handed to ``sender`` in one go, and each one's outcome (MAIL-16)."""
    now = ctx.clock.now()
    letters: list[Letter] = []
    handed: dict[int, Handed] = {}
    for outgoing in batch:
        try:
            letters.append(_letter(ctx, parts, outgoing, now))
        except (ValueError, TypeError) as unbuildable:  # an address no header can carry: retrying will not help
            handed[outgoing.recipient_id] = Handed(Delivery.REFUSED, type(unbuildable).__name__)
    built = [outgoing for outgoing in batch if outgoing.recipient_id not in handed]
    handed.update(zip((o.recipient_id for o in built), await sender.deliver_all(letters), strict=True))
    raw = {o.recipient_id: letter.as_sent() for o, letter in zip(built, letters, strict=True)} if ctx.keep_raw else {}
    return [
        _outcome(outgoing.recipient_id, handed[outgoing.recipient_id], raw.get(outgoing.recipient_id))
        for outgoing in batch
    ]


def _outcome(recipient_id: int, handed: Handed, raw: bytes | None) -> work.Outcome:
    if handed.delivery is Delivery.REFUSED:
        log.warning("campaign message refused", recipient_id=recipient_id, answer=handed.reason)
        return work.Outcome(recipient_id, sent=False, final=True)
    if handed.delivery is Delivery.LATER:  # not taken this time: retried with back-off (MAIL-16)
        log.info("campaign message not taken yet", recipient_id=recipient_id, error=handed.reason)
        return work.Outcome(recipient_id, sent=False)
    return work.Outcome(recipient_id, sent=True, raw=raw)
