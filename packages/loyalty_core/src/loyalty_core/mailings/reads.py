"""The audience's statements and a mailing's counts (MAIL-6, MAIL-7).

The audience is one statement over the vendor's customers, joined set-wise to the wallets, the
activity and the tier months of the window (MAIL-19, MAIL-20): the members (active, matching the
criteria) and, for the plan's limit, those who would be mailed now (with an email, consenting, not
suppressed for this shop).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    FromClause,
    Select,
    and_,
    case,
    cast,
    exists,
    false,
    func,
    literal,
    or_,
    select,
    union_all,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.types import DateTime

from loyalty_core.clock import Clock
from loyalty_core.customers.models import Customer, CustomerStatus
from loyalty_core.earning.models import customer_activity
from loyalty_core.listing import Listed, page_of
from loyalty_core.mailings.errors import MailingNotFound
from loyalty_core.mailings.models import Mailing, MailingRecipient, RecipientState
from loyalty_core.mailings.rules import Audience
from loyalty_core.passes.models import CardMail, EmailSuppression, MailStatus, SuppressionRelease
from loyalty_core.tiers.holders import holding
from loyalty_core.tiers.reads import paying_ladder_of
from loyalty_core.wallet.models import Wallet, due_points
from loyalty_core.wallet.till_pending import available_points, available_shown

_C = Customer.__table__.c
_W = Wallet.__table__.c
_A = customer_activity.c
_S = EmailSuppression.__table__.c
_REL = SuppressionRelease.__table__.c
_R = MailingRecipient.__table__.c

COUNTED = (
    RecipientState.SENT,
    RecipientState.FAILED,
    RecipientState.SKIPPED_INACTIVE,
    RecipientState.SKIPPED_NO_EMAIL,
    RecipientState.SKIPPED_NO_CONSENT,
    RecipientState.SKIPPED_SUPPRESSED,
)


def month_start(now: datetime) -> datetime:
    today = now.astimezone(UTC).date()
    return datetime.combine(today.replace(day=1), time(), UTC)


def suppressed(vendor_id: int, email: Any) -> ColumnElement[bool]:
    """On the global list (either reason) and not switched back on by this shop (PASS-5, MAIL-7)."""
    key = func.lower(func.trim(email))
    released = exists().where(_REL.vendor_id == vendor_id, _REL.email == key)
    return exists().where(_S.email == key, ~released)


def shown_balance(vendor_id: int, now: datetime) -> Any:
    """The balance of a customer's wallet as the API shows it at ``now`` (MAIL-4, MAIL-5): the
    wallet's, less its points past their end that no entry has expired yet (LEDGER-9), plus its
    pending points whose instant has passed (PENDING-4); NULL without a wallet. A column correlated
    to ``customers``."""
    due = due_points(_W.vendor_id, _W.id, now).scalar_subquery()
    return (
        select(cast(_W.balance - due + available_shown(_W, now), BigInteger))
        .where(_W.vendor_id == vendor_id, _W.customer_id == _C.id)
        .scalar_subquery()
    )


def balance_at_least(vendor_id: int, minimum: int, now: datetime) -> ColumnElement[bool]:
    """Whether a customer's :func:`shown_balance` (0 without a wallet) reaches ``minimum``, as a
    semi-join on the vendor's wallets rather than a balance computed per customer (MAIL-20). Only
    the wallets that could reach it read their lots and pending points: due points only take away,
    so a wallet without pending points due reads its lots only when its stored balance reaches
    ``minimum``, and one below it is out at once."""
    due = due_points(_W.vendor_id, _W.id, now).scalar_subquery()
    available = available_points(_W.vendor_id, _W.id, now).scalar_subquery()
    reaches = case(
        (_W.pending_next_at <= now, _W.balance - due + available >= minimum),
        (_W.balance >= minimum, _W.balance - due >= minimum),
        else_=false(),
    )
    own = and_(_W.vendor_id == vendor_id, _W.customer_id == _C.id)
    if minimum > 0:
        return exists().where(own, or_(_W.pending_next_at <= now, _W.balance >= minimum), reaches)
    # a customer without a wallet shows 0, which reaches a minimum of 0
    return ~exists().where(own, ~reaches)


async def members(session: AsyncSession, vendor_id: int, audience: Audience, now: datetime) -> Select[Any]:
    """The ids of the vendor's active customers matching every set criterion (MAIL-4, MAIL-6), each
    criterion a join or a (semi-, anti-) join over the vendor's rows, none a read per customer
    (MAIL-19, MAIL-20)."""
    rows: FromClause = Customer.__table__
    if audience.inactive_days is not None:
        # one (hash) left join on the activity rather than a probe per customer (MAIL-20)
        rows = rows.outerjoin(customer_activity, and_(_A.vendor_id == vendor_id, _A.customer_id == _C.id))
    statement = (
        select(_C.id)
        .select_from(rows)
        .where(_C.vendor_id == vendor_id, _C.status == CustomerStatus.ACTIVE, _C.merged_into_id.is_(None))
    )
    if audience.min_balance is not None:
        statement = statement.where(balance_at_least(vendor_id, audience.min_balance, now))
    if audience.inactive_days is not None:
        since = func.coalesce(_A.last_purchase_at, cast(_C.customer_since, DateTime(timezone=True)), _C.created_at)
        statement = statement.where(since < now - timedelta(days=audience.inactive_days))
    if audience.birthday_month is not None:
        statement = statement.where(func.extract("month", _C.date_of_birth) == audience.birthday_month)
    if audience.tiers is not None:
        ladder = await paying_ladder_of(session, vendor_id)
        statement = statement.where(holding(vendor_id, ladder, audience.tiers, now))
    return statement


def mailable(vendor_id: int, statement: Select[Any]) -> Select[Any]:
    """Of ``members``, those who would be mailed now (MAIL-14)."""
    return statement.where(
        _C.email.is_not(None), _C.email != "", _C.marketing_consent.is_(True), ~suppressed(vendor_id, _C.email)
    )


async def audience_count(session: AsyncSession, vendor_id: int, audience: Audience, now: datetime) -> int:
    """How many customers the audience holds now (the portal's live count)."""
    inner = (await members(session, vendor_id, audience, now)).subquery()
    return int(await session.scalar(select(func.count()).select_from(inner)) or 0)


async def mailable_count(session: AsyncSession, vendor_id: int, audience: Audience, now: datetime) -> int:
    inner = mailable(vendor_id, await members(session, vendor_id, audience, now)).subquery()
    return int(await session.scalar(select(func.count()).select_from(inner)) or 0)


async def sent_this_month(session: AsyncSession, vendor_id: int, now: datetime) -> int:
    """Campaign messages sent this UTC month (test copies are not counted; MAIL-14)."""
    statement = select(func.count()).where(
        _R.vendor_id == vendor_id,
        _R.state == RecipientState.SENT,
        _R.customer_id.is_not(None),
        _R.decided_at >= month_start(now),
    )
    return int(await session.scalar(statement) or 0)


@dataclass(frozen=True, slots=True)
class MailingView:
    mailing: Mailing
    counts: dict[str, int] = field(default_factory=dict)


def empty_counts() -> dict[str, int]:
    return {str(state): 0 for state in COUNTED} | {"pending": 0}


async def counts_of(session: AsyncSession, vendor_id: int, mailing_ids: Sequence[int]) -> dict[int, dict[str, int]]:
    """Each mailing's counts: decided states as they are, ``pending`` and ``sending`` as pending."""
    result: dict[int, dict[str, int]] = {mailing_id: empty_counts() for mailing_id in mailing_ids}
    if not mailing_ids:
        return result
    rows = await session.execute(
        select(_R.mailing_id, _R.state, func.count().label("n"))
        .where(_R.vendor_id == vendor_id, _R.mailing_id.in_(list(mailing_ids)), _R.customer_id.is_not(None))
        .group_by(_R.mailing_id, _R.state)
    )
    for mailing_id, state, n in rows:
        key = "pending" if state in (RecipientState.PENDING, RecipientState.SENDING) else str(state)
        result[mailing_id][key] += int(n)
    return result


class MailingReads:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def row(self, vendor_id: int, mailing_id: int, *, lock: bool = False) -> Mailing:
        statement = select(Mailing).where(Mailing.vendor_id == vendor_id, Mailing.id == mailing_id)
        if lock:
            statement = statement.with_for_update()
        mailing = await self._session.scalar(statement.execution_options(populate_existing=True))
        if mailing is None:
            raise MailingNotFound("No mailing of the vendor has this id.", mailing_id=mailing_id)
        return mailing

    async def get(self, vendor_id: int, mailing_id: int) -> MailingView:
        mailing = await self.row(vendor_id, mailing_id)
        return MailingView(mailing, (await counts_of(self._session, vendor_id, [mailing.id]))[mailing.id])

    async def view_of(self, mailing: Mailing) -> MailingView:
        return MailingView(mailing, (await counts_of(self._session, mailing.vendor_id, [mailing.id]))[mailing.id])

    async def mailings(self, vendor_id: int, *, page: int, per_page: int) -> Listed[MailingView]:
        """Newest first."""
        statement = select(Mailing).where(Mailing.vendor_id == vendor_id).order_by(Mailing.id.desc())
        listed = await page_of(self._session, statement, page=page, per_page=per_page)
        counts = await counts_of(self._session, vendor_id, [m.id for m in listed.items])
        return Listed([MailingView(m, counts[m.id]) for m in listed.items], listed.total)


@dataclass(frozen=True, slots=True)
class OutboxRow:
    """A card mail or a campaign message as test mode's outbox lists it."""

    id: int
    to: str
    subject: str | None
    created_at: datetime
    status: str
    attachments: list[dict[str, str]]


async def outbox(
    session: AsyncSession, *, page: int, per_page: int, failed: bool = False
) -> tuple[list[OutboxRow], int]:
    """Test mode's outbox (OPS-4, MAIL-18): the card mails sent or written and the campaign messages
    sent, newest first; with ``failed``, those that ended failed. A campaign message's ``id`` is its
    recipient row's (``GET /admin/v1/outbox/{id}/raw``)."""
    m = CardMail.__table__.c
    cards = select(
        m.id,
        m.to_address.label("to"),
        m.subject,
        m.accepted_at.label("created_at"),
        m.status,
        m.attachments,
    ).where(m.status == MailStatus.FAILED if failed else m.status.in_([MailStatus.SENT, MailStatus.WRITTEN]))
    mailing = Mailing.__table__.c
    campaign = (
        select(
            _R.id,
            _R.to_address.label("to"),
            mailing.subject,
            _R.decided_at.label("created_at"),
            _R.state.label("status"),
            cast(literal("[]"), JSONB).label("attachments"),
        )
        .select_from(
            MailingRecipient.__table__.join(
                Mailing.__table__, and_(mailing.vendor_id == _R.vendor_id, mailing.id == _R.mailing_id)
            )
        )
        .where(_R.state == (RecipientState.FAILED if failed else RecipientState.SENT), _R.to_address.is_not(None))
    )
    both = union_all(cards, campaign).subquery()
    total = int(await session.scalar(select(func.count()).select_from(both)) or 0)
    rows = await session.execute(
        select(both).order_by(both.c.created_at.desc(), both.c.id.desc()).limit(per_page).offset((page - 1) * per_page)
    )
    listed = [
        OutboxRow(
            id=r.id, to=r.to, subject=r.subject, created_at=r.created_at, status=r.status, attachments=r.attachments
        )
        for r in rows
    ]
    return listed, total
