"""The core work of the ``campaign-mails`` job (MAIL-6 to MAIL-9, MAIL-13 to MAIL-16).

Due scheduled mailings start (or are cancelled for the plan); a sending mailing's recipients are
decided a batch at a time: each is checked in the order of MAIL-7 at the moment their message is
due, and a member to be mailed is marked ``sending`` in the batch's committed transaction before
the message goes. Whoever sends a mailing holds its advisory lock on a connection of its own, so a
row found ``sending`` by the next holder was interrupted (a worker killed mid-send): it is counted
``failed`` and never sent again (MAIL-9).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, exists, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from loyalty_core.customers.models import Customer, CustomerIdentifier, CustomerStatus, IdentifierType
from loyalty_core.mailings import reads
from loyalty_core.mailings.models import CancelReason, Mailing, MailingRecipient, MailingStatus, RecipientState
from loyalty_core.mailings.rules import SAMPLE, Facts
from loyalty_core.mailings.services import cancel_due, fits, start
from loyalty_core.tenancy.models import Vendor
from loyalty_core.tenancy.services.ceilings import plan_of
from loyalty_core.tiers.models import Tier
from loyalty_core.tiers.reads import standing_from, tier_facts_column

BATCH = 200
RETRY_FOR = timedelta(hours=24)
"""MAIL-16: a message the server does not take is tried again with back-off for this long, then failed."""
FIRST_BACKOFF = timedelta(seconds=30)
MAX_BACKOFF = timedelta(hours=1)
LOCK_CLASS = 0x4D41494C
"""The advisory locks' first key ("MAIL"); the second is the mailing's id."""

_R = MailingRecipient.__table__.c
_C = Customer.__table__.c
_I = CustomerIdentifier.__table__.c


def backoff(attempts: int) -> timedelta:
    step: timedelta = FIRST_BACKOFF * (2 ** min(max(0, attempts - 1), 12))
    return min(step, MAX_BACKOFF)


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A message to send now: the row marked ``sending``, and what fills it."""

    recipient_id: int
    vendor_id: int
    mailing_id: int
    customer_id: int | None
    to: str
    subject: str
    body: str
    shop_name: str
    facts: Facts


async def start_due(session: AsyncSession, now: datetime) -> list[int]:
    """Scheduled mailings whose instant has come start, or end cancelled for the plan (MAIL-13,
    MAIL-14); one transaction the caller commits. Answers the ids started."""
    started: list[int] = []
    due = await session.scalars(
        select(Mailing)
        .where(Mailing.status == MailingStatus.SCHEDULED, Mailing.scheduled_for <= now)
        .order_by(Mailing.scheduled_for, Mailing.id)
        .with_for_update(skip_locked=True)
    )
    for mailing in due.all():
        plan = await plan_of(session, mailing.vendor_id, lock=True)
        if not plan.feature_campaign_mail:
            await cancel_due(session, mailing, CancelReason.PLAN_FEATURE)
        elif not await fits(session, plan, mailing, now):
            await cancel_due(session, mailing, CancelReason.PLAN_LIMIT)
        else:
            await start(session, mailing, now)
            started.append(mailing.id)
    return started


async def sending(session: AsyncSession) -> list[tuple[int, int]]:
    """(vendor, mailing) of every mailing sending, and of every mailing with a test copy waiting."""
    rows = await session.execute(
        select(Mailing.vendor_id, Mailing.id)
        .where(
            (Mailing.status == MailingStatus.SENDING)
            | exists().where(
                _R.vendor_id == Mailing.vendor_id,
                _R.mailing_id == Mailing.id,
                _R.customer_id.is_(None),
                _R.state == RecipientState.PENDING,
            )
        )
        .order_by(Mailing.id)
    )
    return [(vendor_id, mailing_id) for vendor_id, mailing_id in rows]


async def try_lock(connection: AsyncConnection, mailing_id: int) -> bool:
    """The mailing's sender lock, held by ``connection``'s session until ``unlock`` or its end."""
    taken = await connection.scalar(text("SELECT pg_try_advisory_lock(:c, :m)"), {"c": LOCK_CLASS, "m": mailing_id})
    return bool(taken)


async def unlock(connection: AsyncConnection, mailing_id: int) -> None:
    await connection.execute(text("SELECT pg_advisory_unlock(:c, :m)"), {"c": LOCK_CLASS, "m": mailing_id})


async def fail_interrupted(session: AsyncSession, vendor_id: int, mailing_id: int, now: datetime) -> int:
    """MAIL-9: rows left ``sending`` by a sender that died; call only while holding the mailing's lock."""
    done = await session.execute(
        update(MailingRecipient)
        .where(_R.vendor_id == vendor_id, _R.mailing_id == mailing_id, _R.state == RecipientState.SENDING)
        .values(state=RecipientState.FAILED, decided_at=now, next_attempt_at=None)
    )
    return int(done.rowcount or 0)  # type: ignore[attr-defined]


def _card_code(vendor_id: int) -> Any:
    return (
        select(_I.value)
        .where(
            _I.vendor_id == vendor_id,
            _I.customer_id == _C.id,
            _I.type == IdentifierType.LOYALTY_CARD,
            _I.active.is_(True),
        )
        .order_by(_I.assigned_at.desc().nulls_last(), _I.id.desc())
        .limit(1)
        .scalar_subquery()
    )


async def claim(
    session: AsyncSession, vendor_id: int, mailing_id: int, now: datetime, limit: int = BATCH, *, members: bool = True
) -> list[Outgoing]:
    """Decide the next due recipients (MAIL-7) and mark those to be mailed ``sending``; the caller
    commits before sending. Test copies first; members only while the mailing is ``sending``."""
    mailing = await session.get_one(Mailing, mailing_id)
    shop_name = str(await session.scalar(select(Vendor.name).where(Vendor.id == vendor_id)))
    first_tier = await session.scalar(
        select(Tier.name).where(Tier.vendor_id == vendor_id).order_by(Tier.threshold, Tier.id).limit(1)
    )
    due = (_R.next_attempt_at.is_(None)) | (_R.next_attempt_at <= now)
    outgoing: list[Outgoing] = []
    tests = await session.execute(
        select(_R.id, _R.to_address)
        .where(
            _R.vendor_id == vendor_id,
            _R.mailing_id == mailing_id,
            _R.customer_id.is_(None),
            _R.state == RecipientState.PENDING,
            due,
        )
        .order_by(_R.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    sample = Facts(SAMPLE.first_name, SAMPLE.balance, SAMPLE.card_code, first_tier or "")
    for recipient_id, to in tests:
        outgoing.append(
            Outgoing(
                recipient_id, vendor_id, mailing_id, None, str(to), mailing.subject, mailing.body, shop_name, sample
            )
        )
    if members and mailing.status == MailingStatus.SENDING:
        # a batch whose every member is skipped sends nothing but is not the end: the members after
        # it are claimed in the same call, so a run stops only when no member is left due (MAIL-7)
        while len(outgoing) < limit:
            found, examined = await _claim_members(session, mailing, shop_name, now, due, limit - len(outgoing))
            outgoing += found
            if found or not examined:
                break
    if outgoing:
        await session.execute(
            update(MailingRecipient)
            .where(_R.vendor_id == vendor_id, _R.id.in_([o.recipient_id for o in outgoing]))
            .values(
                state=RecipientState.SENDING,
                first_attempt_at=func.coalesce(_R.first_attempt_at, now),
                to_address=func.coalesce(
                    _R.to_address,
                    select(_C.email).where(_C.vendor_id == _R.vendor_id, _C.id == _R.customer_id).scalar_subquery(),
                ),
            )
        )
    return outgoing


async def _claim_members(
    session: AsyncSession, mailing: Mailing, shop_name: str, now: datetime, due: Any, limit: int
) -> tuple[list[Outgoing], int]:
    """The next due members to mail, and how many due members were examined (mailed or skipped)."""
    vendor_id = mailing.vendor_id
    balance = reads.shown_balance(vendor_id, now)
    rows = await session.execute(
        select(
            _R.id.label("recipient_id"),
            _C.id.label("customer_id"),
            _C.status,
            _C.merged_into_id,
            _C.email,
            _C.marketing_consent,
            _C.first_name,
            reads.suppressed(vendor_id, _C.email).label("is_suppressed"),
            func.coalesce(balance, 0).label("balance"),
            _card_code(vendor_id).label("card_code"),
            tier_facts_column(now),
        )
        .select_from(
            MailingRecipient.__table__.join(
                Customer.__table__, and_(_C.vendor_id == _R.vendor_id, _C.id == _R.customer_id), isouter=True
            )
        )
        .where(
            _R.vendor_id == vendor_id,
            _R.mailing_id == mailing.id,
            _R.customer_id.is_not(None),
            _R.state == RecipientState.PENDING,
            due,
        )
        .order_by(_R.id)
        .limit(limit)
        .with_for_update(of=MailingRecipient.__table__, skip_locked=True)
    )
    skipped: dict[RecipientState, list[int]] = {}
    outgoing: list[Outgoing] = []
    examined = 0
    for row in rows:
        examined += 1
        state = decide(row.status, row.merged_into_id, row.email, row.marketing_consent, row.is_suppressed)
        if state is not None:
            skipped.setdefault(state, []).append(row.recipient_id)
            continue
        standing = standing_from(row.tier_facts)
        tier = standing.rung.name if standing is not None else ""
        facts = Facts(row.first_name or "", int(row.balance), row.card_code or "", tier)
        outgoing.append(
            Outgoing(
                row.recipient_id,
                vendor_id,
                mailing.id,
                row.customer_id,
                row.email,
                mailing.subject,
                mailing.body,
                shop_name,
                facts,
            )
        )
    for state, ids in skipped.items():
        await session.execute(
            update(MailingRecipient)
            .where(_R.vendor_id == vendor_id, _R.id.in_(ids))
            .values(state=state, decided_at=now, next_attempt_at=None)
        )
    return outgoing, examined


def decide(
    status: str | None, merged_into_id: int | None, email: str | None, consent: bool | None, is_suppressed: bool | None
) -> RecipientState | None:
    """MAIL-7, in this order; None: the message is sent."""
    if status != CustomerStatus.ACTIVE or merged_into_id is not None:
        return RecipientState.SKIPPED_INACTIVE
    if not email:
        return RecipientState.SKIPPED_NO_EMAIL
    if consent is not True:
        return RecipientState.SKIPPED_NO_CONSENT
    if is_suppressed:
        return RecipientState.SKIPPED_SUPPRESSED
    return None


@dataclass(frozen=True, slots=True)
class Outcome:
    recipient_id: int
    sent: bool
    """False: not taken this time (retried) or, with ``final``, refused for good."""
    final: bool = False
    raw: bytes | None = None


async def record(session: AsyncSession, vendor_id: int, outcomes: Sequence[Outcome], now: datetime) -> None:
    """MAIL-16: sent, failed for good, or back to ``pending`` with back-off until 24 hours have passed."""
    sent = [o for o in outcomes if o.sent]
    plain = [o.recipient_id for o in sent if o.raw is None]
    if plain:  # one statement for the batch's sent messages
        await session.execute(
            update(MailingRecipient)
            .where(_R.vendor_id == vendor_id, _R.id.in_(plain))
            .values(state=RecipientState.SENT, decided_at=now, attempts=_R.attempts + 1, next_attempt_at=None)
        )
    for outcome in (o for o in sent if o.raw is not None):  # test mode keeps each message as sent
        await session.execute(
            update(MailingRecipient)
            .where(_R.vendor_id == vendor_id, _R.id == outcome.recipient_id)
            .values(
                state=RecipientState.SENT,
                decided_at=now,
                attempts=_R.attempts + 1,
                next_attempt_at=None,
                raw=outcome.raw,
            )
        )
    for outcome in outcomes:
        if outcome.sent:
            continue
        row = await session.get_one(MailingRecipient, outcome.recipient_id, populate_existing=True)
        row.attempts += 1
        started = row.first_attempt_at or now
        if outcome.final or now - started >= RETRY_FOR:
            row.state, row.decided_at, row.next_attempt_at = RecipientState.FAILED, now, None
        else:
            row.state, row.next_attempt_at = RecipientState.PENDING, now + backoff(row.attempts)
    await session.flush()


async def finish(session: AsyncSession, vendor_id: int, mailing_id: int, now: datetime) -> bool:
    """A sending mailing whose every member is decided is ``sent``, at its last message's instant."""
    mailing = await session.get_one(Mailing, mailing_id, populate_existing=True, with_for_update=True)
    if mailing.status != MailingStatus.SENDING:
        return False
    open_rows = await session.scalar(
        select(func.count()).where(
            _R.vendor_id == vendor_id,
            _R.mailing_id == mailing_id,
            _R.customer_id.is_not(None),
            _R.state.in_([RecipientState.PENDING, RecipientState.SENDING]),
        )
    )
    if open_rows:
        return False
    last = await session.scalar(
        select(func.max(_R.decided_at)).where(
            _R.vendor_id == vendor_id,
            _R.mailing_id == mailing_id,
            _R.state == RecipientState.SENT,
            _R.customer_id.is_not(None),
        )
    )
    mailing.status = MailingStatus.SENT
    mailing.sent_at = last or now
    await session.flush()
    return True


async def raw_message(session: AsyncSession, recipient_id: int) -> bytes | None:
    """A sent campaign message exactly as sent (kept in test mode only)."""
    raw = await session.scalar(select(_R.raw).where(_R.id == recipient_id, _R.state == RecipientState.SENT))
    return bytes(raw) if raw is not None else None
