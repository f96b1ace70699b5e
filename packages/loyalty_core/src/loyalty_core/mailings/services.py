"""A shop's mailings: drafts written and edited, a test copy, send (now or at an instant) and cancel
(MAIL-2 to MAIL-6, MAIL-11 to MAIL-15). Every write needs the plan's ``campaign_mail`` feature."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, literal, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.earning.errors import PlanFeatureUnavailable, PlanLimitExceeded
from loyalty_core.errors import ValidationFailed
from loyalty_core.mailings import reads
from loyalty_core.mailings.errors import MailingNotActive, MailingNotDraft
from loyalty_core.mailings.models import CancelReason, Mailing, MailingRecipient, MailingStatus, RecipientState
from loyalty_core.mailings.rules import Audience, audience_problems, body_problems, subject_problems
from loyalty_core.tenancy.models import Plan
from loyalty_core.tenancy.services.ceilings import plan_of
from loyalty_core.tiers.models import Tier


@dataclass(frozen=True, slots=True)
class Draft:
    """The fields a create or an edit names; None: not named (an edit keeps the stored value)."""

    subject: str | None = None
    body: str | None = None
    audience: Audience | None = None


def require_feature(plan: Plan) -> None:
    """MAIL-13: every mailing write needs the plan's ``campaign_mail``."""
    if not plan.feature_campaign_mail:
        raise PlanFeatureUnavailable("The vendor's plan does not include campaign mail.", feature="campaign_mail")


async def known_tiers(session: AsyncSession, vendor_id: int) -> set[str]:
    return set((await session.scalars(select(Tier.key).where(Tier.vendor_id == vendor_id))).all())


async def start(session: AsyncSession, mailing: Mailing, now: datetime) -> None:
    """Fix the audience: one recipient row per member, in one statement (MAIL-6, MAIL-8)."""
    members = (await reads.members(session, mailing.vendor_id, Audience.of_json(mailing.audience), now)).subquery()
    rows = select(
        func.nextval("mailing_recipients_id_seq"),
        literal(mailing.vendor_id),
        literal(mailing.id),
        members.c.id,
        literal(str(RecipientState.PENDING)),
        literal(0),
        literal(now),
        literal(now),
    ).select_from(members)
    await session.execute(
        insert(MailingRecipient)
        .from_select(
            ["id", "vendor_id", "mailing_id", "customer_id", "state", "attempts", "created_at", "updated_at"], rows
        )
        .on_conflict_do_nothing(constraint="uq_mailing_recipients_customer")
    )
    r = MailingRecipient.__table__.c
    mailing.audience_size = int(
        await session.scalar(
            select(func.count()).where(
                r.vendor_id == mailing.vendor_id, r.mailing_id == mailing.id, r.customer_id.is_not(None)
            )
        )
        or 0
    )
    mailing.status = MailingStatus.SENDING
    mailing.started_at = now
    if mailing.audience_size == 0:
        mailing.status = MailingStatus.SENT
        mailing.sent_at = now
    await session.flush()


async def fits(session: AsyncSession, plan: Plan, mailing: Mailing, now: datetime) -> bool:
    """MAIL-14: whether those who would be mailed now fit in what is left of this month's messages."""
    if not plan.max_campaign_mails:
        return True
    audience = Audience.of_json(mailing.audience)
    wanted = await reads.mailable_count(session, mailing.vendor_id, audience, now)
    left = plan.max_campaign_mails - await reads.sent_this_month(session, mailing.vendor_id, now)
    return wanted <= left


class MailingService:
    """Each verb on a mailing finds it first (another vendor's is not found, whatever its plan),
    then reads the plan's feature."""

    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock
        self.reads = reads.MailingReads(session, clock)

    async def _plan(self, vendor_id: int, *, lock: bool = False) -> Plan:
        plan = await plan_of(self._session, vendor_id, lock=lock)
        require_feature(plan)
        return plan

    async def _checked(self, vendor_id: int, draft: Draft) -> None:
        problems: dict[str, list[str]] = {}
        if draft.subject is not None and (found := subject_problems(draft.subject)):
            problems["subject"] = found
        if draft.body is not None and (found := body_problems(draft.body)):
            problems["body"] = found
        if draft.audience is not None:
            problems |= audience_problems(draft.audience, await known_tiers(self._session, vendor_id))
        if problems:
            raise ValidationFailed("The mailing is not valid.", problems)

    async def create(self, vendor_id: int, subject: str, body: str, audience: Audience) -> reads.MailingView:
        await self._plan(vendor_id)
        await self._checked(vendor_id, Draft(subject, body, audience))
        mailing = Mailing(
            vendor_id=vendor_id,
            subject=subject.strip(" "),
            body=body,
            audience=audience.as_json(),
            status=MailingStatus.DRAFT,
        )
        self._session.add(mailing)
        await self._session.flush()
        return reads.MailingView(mailing, reads.empty_counts())

    async def update(self, vendor_id: int, mailing_id: int, draft: Draft) -> reads.MailingView:
        """MAIL-2: drafts only; the fields named are replaced, ``audience`` whole."""
        await self.reads.row(vendor_id, mailing_id)
        await self._plan(vendor_id)
        mailing = await self.reads.row(vendor_id, mailing_id, lock=True)
        if mailing.status != MailingStatus.DRAFT:
            raise MailingNotDraft("Only a draft can be edited.", status=mailing.status)
        await self._checked(vendor_id, draft)
        if draft.subject is not None:
            mailing.subject = draft.subject.strip(" ")
        if draft.body is not None:
            mailing.body = draft.body
        if draft.audience is not None:
            mailing.audience = draft.audience.as_json()
        mailing.updated_at = self._clock.now()
        await self._session.flush()
        return reads.MailingView(mailing, reads.empty_counts())

    async def test(self, vendor_id: int, mailing_id: int, email: str) -> int:
        """MAIL-11: one copy to ``email`` with sample values, sent by the mail job; counted nowhere."""
        await self.reads.row(vendor_id, mailing_id)
        await self._plan(vendor_id)
        row = MailingRecipient(
            vendor_id=vendor_id,
            mailing_id=mailing_id,
            customer_id=None,
            to_address=email.strip(),
            state=RecipientState.PENDING,
            attempts=0,
        )
        self._session.add(row)
        await self._session.flush()
        return row.id

    async def send(self, vendor_id: int, mailing_id: int, at: datetime | None) -> reads.MailingView:
        """MAIL-5: a draft is scheduled for ``at`` or starts sending now. The vendor row is locked
        first, so racing sends of a vendor meet the month's limit one by one, and the mailing's row
        next, so of racing sends of one draft one is accepted."""
        await self.reads.row(vendor_id, mailing_id)
        plan = await self._plan(vendor_id, lock=True)
        mailing = await self.reads.row(vendor_id, mailing_id, lock=True)
        if mailing.status != MailingStatus.DRAFT:
            raise MailingNotDraft("Only a draft can be sent.", status=mailing.status)
        now = self._clock.now()
        if at is not None:
            if at <= now:
                raise ValidationFailed("The mailing is not valid.", {"at": ["Must be after the service's clock."]})
            mailing.status = MailingStatus.SCHEDULED
            mailing.scheduled_for = at
            await self._session.flush()
            return await self.reads.view_of(mailing)
        if not await fits(self._session, plan, mailing, now):
            raise PlanLimitExceeded(
                "The plan's monthly campaign mails would be exceeded by this mailing.",
                max_campaign_mails=plan.max_campaign_mails,
            )
        await start(self._session, mailing, now)
        return await self.reads.view_of(mailing)

    async def cancel(self, vendor_id: int, mailing_id: int) -> reads.MailingView:
        """MAIL-15: a scheduled or sending mailing stops; what is not decided stays ``pending``."""
        await self.reads.row(vendor_id, mailing_id)
        await self._plan(vendor_id)
        mailing = await self.reads.row(vendor_id, mailing_id, lock=True)
        if mailing.status not in (MailingStatus.SCHEDULED, MailingStatus.SENDING):
            raise MailingNotActive("Only a scheduled or sending mailing can be cancelled.", status=mailing.status)
        mailing.status = MailingStatus.CANCELLED
        mailing.cancel_reason = CancelReason.USER
        await self._session.flush()
        return await self.reads.view_of(mailing)


async def cancel_due(session: AsyncSession, mailing: Mailing, reason: CancelReason) -> None:
    mailing.status = MailingStatus.CANCELLED
    mailing.cancel_reason = reason
    await session.flush()
