"""The card-mail outbox as rows: the global suppression list and its per-shop releases (PASS-5),
the outbox listing of test mode, and what the mail job needs to deliver each accepted mail once (PASS-6):
a claim under a row lock, the back-off of a mail that waits or failed, and the delivered state.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.errors import NotFound
from loyalty_core.listing import page_of
from loyalty_core.passes.models import CardMail, EmailSuppression, MailStatus, SuppressionRelease
from loyalty_core.text import mail_key

IDENTITY_WAIT = timedelta(hours=24)
"""A mail whose shop has no platform_a identity waits this long from its acceptance, then goes
without the pass file (PASS-7)."""
FIRST_BACKOFF = timedelta(seconds=30)
MAX_BACKOFF = timedelta(hours=1)
MAX_ATTEMPTS = 36
"""A mail that still cannot be built or sent after this many attempts (waits for the shop's
identity included: those take about 30 over their day) is marked failed instead of being retried
for ever; with the back-off that is a day and a half of tries."""

_M = CardMail.__table__.c
_S = EmailSuppression.__table__.c
_R = SuppressionRelease.__table__.c


class SuppressionNotFound(NotFound):
    """The admin API's 404 for releasing an address that is suppressed nowhere."""

    code = "NOT_FOUND"


def backoff(attempts: int) -> timedelta:
    """30 s, 1 min, 2 min, ... up to an hour between attempts of one mail."""
    step: timedelta = FIRST_BACKOFF * (2 ** min(max(0, attempts - 1), 12))
    return min(step, MAX_BACKOFF)


class Outbox:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session = session
        self._clock = clock

    # --- suppressions (PASS-5) ------------------------------------------------------------------

    async def suppress(self, email: str, reason: str) -> EmailSuppression:
        """Record a bounce or complaint for every shop. A new report of an address overrides the
        shops' earlier releases: it bounced again after sending was switched back on."""
        address = mail_key(email)
        await self._session.execute(
            insert(EmailSuppression)
            .values(email=address, reason=reason)
            .on_conflict_do_update(
                constraint="uq_email_suppressions_email", set_={"reason": reason, "updated_at": self._clock.now()}
            )
        )
        await self._session.execute(delete(SuppressionRelease).where(_R.email == address))
        row = await self._session.scalar(
            select(EmailSuppression).where(_S.email == address).execution_options(populate_existing=True)
        )
        assert row is not None  # just written
        return row

    async def release(self, vendor_id: int, email: str) -> None:
        """Switch sending back on for one shop; an address suppressed nowhere is not found."""
        address = mail_key(email)
        if await self._session.scalar(select(_S.id).where(_S.email == address)) is None:
            raise SuppressionNotFound("This address is not on the suppression list.", email=email)
        await self._session.execute(
            insert(SuppressionRelease)
            .values(vendor_id=vendor_id, email=address)
            .on_conflict_do_nothing(constraint="uq_email_suppression_releases")
        )

    async def suppressions(
        self, *, email: str | None, page: int, per_page: int
    ) -> tuple[Sequence[EmailSuppression], int]:
        """The suppression list, newest first; ``email`` is one address (case aside), through its unique index."""
        statement = select(EmailSuppression).order_by(_S.id.desc())
        if email is not None:
            statement = statement.where(_S.email == email.strip().lower())
        listed = await page_of(self._session, statement, page=page, per_page=per_page)
        return listed.items, listed.total

    # --- the outbox listing (test mode) ----------------------------------------------------------

    async def delivered(self, *, page: int, per_page: int, failed: bool = False) -> tuple[Sequence[CardMail], int]:
        """Mails sent over SMTP or written as files, newest first; with ``failed``, the mails that
        ended failed instead (refused for good, or not built or sent after their attempts)."""
        done = _M.status == MailStatus.FAILED if failed else _M.status.in_([MailStatus.SENT, MailStatus.WRITTEN])
        total = int(await self._session.scalar(select(func.count()).select_from(CardMail).where(done)) or 0)
        rows = await self._session.scalars(
            select(CardMail)
            .where(done)
            .order_by(_M.created_at.desc(), _M.id.desc())
            .limit(per_page)
            .offset((page - 1) * per_page)
        )
        return rows.all(), total

    # --- the mail job ----------------------------------------------------------------------------

    async def due(self, limit: int = 100) -> list[int]:
        """Queued mails whose next attempt has come (the sweep that catches what an enqueue lost)."""
        now = self._clock.now()
        rows = await self._session.scalars(
            select(_M.id)
            .where(_M.status == MailStatus.QUEUED, or_(_M.next_attempt_at.is_(None), _M.next_attempt_at <= now))
            .order_by(_M.id)
            .limit(limit)
        )
        return list(rows)

    async def claim(self, mail_id: int) -> CardMail | None:
        """The queued mail, locked for this transaction; None when it is delivered already or another
        worker holds it (that one delivers it)."""
        mail: CardMail | None = await self._session.scalar(
            select(CardMail)
            .where(_M.id == mail_id, _M.status == MailStatus.QUEUED)
            .with_for_update(skip_locked=True)
            .execution_options(populate_existing=True)
        )
        return mail

    def must_wait_for_identity(self, mail: CardMail) -> bool:
        return self._clock.now() < mail.accepted_at + IDENTITY_WAIT

    async def postpone(self, mail_id: int) -> datetime:
        """Count a failed or waiting attempt and set when the sweep tries again (service clock)."""
        mail = await self._session.get_one(CardMail, mail_id)
        mail.attempts += 1
        mail.next_attempt_at = self._clock.now() + backoff(mail.attempts)
        await self._session.flush()
        return mail.next_attempt_at

    async def failed_attempt(self, mail_id: int) -> bool:
        """Count an attempt that could not build or send the mail: postponed with back-off, or marked
        failed once it has had ``MAX_ATTEMPTS`` (True then)."""
        mail = await self._session.get_one(CardMail, mail_id)
        if mail.status != MailStatus.QUEUED:
            return False
        if mail.attempts + 1 < MAX_ATTEMPTS:
            await self.postpone(mail_id)
            return False
        mail.attempts += 1
        mail.status = MailStatus.FAILED
        mail.next_attempt_at = None
        await self._session.flush()
        return True

    async def mark_delivered(
        self, mail: CardMail, *, status: MailStatus, subject: str, attachments: list[dict[str, str]]
    ) -> None:
        await self._session.execute(
            update(CardMail)
            .where(_M.id == mail.id)
            .values(
                status=status,
                subject=subject,
                attachments=attachments,
                attempts=_M.attempts + 1,
                next_attempt_at=None,
                updated_at=self._clock.now(),
            )
        )

    async def mark_failed(self, mail: CardMail) -> None:
        """The customer can no longer get this mail (anonymized, merged, card gone since the 202)."""
        await self._session.execute(
            update(CardMail).where(_M.id == mail.id).values(status=MailStatus.FAILED, next_attempt_at=None)
        )
