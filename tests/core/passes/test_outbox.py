"""The card-mail outbox rows: back-off on the service clock, what the sweep finds due, the claim
(PASS-6, PASS-7: waiting mails are retried with back-off for up to 24 hours)."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import FixedClock
from loyalty_core.passes.models import CardMail, MailStatus
from loyalty_core.passes.services.outbox import IDENTITY_WAIT, Outbox, backoff
from tests.support.vendors import make_vendor


def test_backoff_doubles_from_half_a_minute_to_an_hour() -> None:
    assert [backoff(n).total_seconds() for n in range(1, 10)] == [30, 60, 120, 240, 480, 960, 1920, 3600, 3600]
    assert backoff(10_000) == timedelta(hours=1)


async def _mail(db: AsyncSession, clock: FixedClock) -> CardMail:
    vendor = await make_vendor(db)
    mail = CardMail(
        vendor_id=vendor.id,
        customer_id=1,
        to_address="a@example.com",
        message_id=f"<card-test-{vendor.id}@example.com>",
        status=MailStatus.QUEUED,
        attachments=[],
        attempts=0,
        accepted_at=clock.now(),
    )
    db.add(mail)
    await db.flush()
    return mail


async def test_a_postponed_mail_is_due_again_only_after_its_backoff(db: AsyncSession, clock: FixedClock) -> None:
    mail = await _mail(db, clock)
    outbox = Outbox(db, clock)
    assert mail.id in await outbox.due()
    assert await outbox.postpone(mail.id) == clock.now() + timedelta(seconds=30)
    assert mail.id not in await outbox.due()
    later = Outbox(db, FixedClock(clock.now() + timedelta(seconds=30)))
    assert mail.id in await later.due()
    assert await later.postpone(mail.id) == clock.now() + timedelta(seconds=90)
    assert mail.attempts == 2


async def test_the_identity_wait_ends_a_day_after_acceptance(db: AsyncSession, clock: FixedClock) -> None:
    mail = await _mail(db, clock)
    assert Outbox(db, FixedClock(clock.now() + IDENTITY_WAIT - timedelta(seconds=1))).must_wait_for_identity(mail)
    assert not Outbox(db, FixedClock(clock.now() + IDENTITY_WAIT)).must_wait_for_identity(mail)


async def test_a_delivered_mail_is_neither_due_nor_claimed(db: AsyncSession, clock: FixedClock) -> None:
    mail = await _mail(db, clock)
    outbox = Outbox(db, clock)
    claimed = await outbox.claim(mail.id)
    assert claimed is not None
    await outbox.mark_delivered(claimed, status=MailStatus.WRITTEN, subject="s", attachments=[])
    assert mail.id not in await outbox.due()
    assert await outbox.claim(mail.id) is None
