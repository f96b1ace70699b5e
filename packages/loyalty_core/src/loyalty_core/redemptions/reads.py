"""The reads of redemptions: the admin list (newest first, by customer, status or code), the reward
list as a till shows it to a customer (REWARD-5; it sits here because a customer's redemptions and
affordability count redemptions), the back office's reads for the portal's pages (one by its
confirmation code, looked up without regard to case, REDEEM-2, and a customer's latest), and how
many redemptions are in each state now, over all vendors, for the operator's metrics.

``expired`` is never stored: a valid code whose ``expires_at`` the clock has reached reads expired
(REDEEM-9), so the status filter and the metrics compare ``expires_at`` with now the way the read
does."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from psycopg import AsyncConnection
from sqlalchemy import ColumnElement, and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.accounts.reads.customer import CustomerReads
from loyalty_core.clock import Clock
from loyalty_core.customers.errors import CustomerNotFound
from loyalty_core.customers.models import Customer
from loyalty_core.listing import Listed, Paged, paged, rows_of
from loyalty_core.redemptions.errors import RedemptionNotFound
from loyalty_core.redemptions.models import Redemption, StoredStatus
from loyalty_core.redemptions.rules import NOT_COUNTED
from loyalty_core.rewards.models import Reward, RewardBranch
from loyalty_core.tenancy.models import Branch
from loyalty_core.tiers.rules import out_of_reach
from loyalty_core.tiers.till_months import ladder_from_read, standing_from_read, tier_facts_of

EXPIRED = "expired"
STATUSES = (StoredStatus.VALID, StoredStatus.USED, StoredStatus.CANCELLED, EXPIRED)


def status_condition(status: str, now: datetime) -> ColumnElement[bool]:
    r = Redemption
    lapsed = and_(r.expires_at.isnot(None), r.expires_at <= now)
    if status == EXPIRED:
        return and_(r.status == StoredStatus.VALID, lapsed)
    if status == StoredStatus.VALID:
        return and_(r.status == StoredStatus.VALID, or_(r.expires_at.is_(None), r.expires_at > now))
    return r.status == status


class RedemptionList:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def redemptions(
        self,
        vendor_id: int,
        *,
        customer_id: int | None,
        status: str | None,
        code: str | None,
        page: int,
        per_page: int,
    ) -> Listed[tuple[Redemption, Branch | None]]:
        r = Redemption
        statement = (
            select(r, Branch)
            .outerjoin(Branch, and_(Branch.vendor_id == r.vendor_id, Branch.id == r.branch_id))
            .where(r.vendor_id == vendor_id)
            .order_by(r.redeemed_at.desc(), r.id.desc())
        )
        if customer_id is not None:
            statement = statement.where(r.customer_id == customer_id)
        if code is not None:
            statement = statement.where(r.confirmation_code == code.strip().upper())
        if status is not None:
            statement = statement.where(status_condition(status, self._clock.now()))
        return await rows_of(self._session, statement, page=page, per_page=per_page)


@dataclass(frozen=True, slots=True)
class RedemptionRow:
    """A row of the back office's redemption list: the redemption, its branch and its customer's name."""

    redemption: Redemption
    branch: Branch | None
    first_name: str | None
    last_name: str | None

    @property
    def customer(self) -> str:
        named = " ".join(part for part in (self.first_name, self.last_name) if part)
        return named or f"Customer {self.redemption.customer_id}"


async def recent_redemptions(
    session: AsyncSession,
    now: datetime,
    vendor_id: int,
    *,
    status: str | None,
    branch: str | None,
    day: date | None,
    oldest_first: bool,
    page: int,
) -> Paged[RedemptionRow]:
    """A page of the shop's redemptions, newest first unless asked, by status as shown now, branch key
    and day (UTC): the primary key walked from the shop's end, the count capped (PORTAL-18)."""
    r = Redemption
    condition = r.vendor_id == vendor_id
    if status in STATUSES:
        condition = and_(condition, status_condition(status, now))
    if day is not None:
        start = datetime.combine(day, time(), tzinfo=UTC)
        condition = and_(condition, r.redeemed_at >= start, r.redeemed_at < start + timedelta(days=1))
    joined = and_(Branch.vendor_id == r.vendor_id, Branch.id == r.branch_id)
    if branch:
        condition = and_(condition, Branch.external_id == branch)
    statement = (
        select(r, Branch, Customer.first_name, Customer.last_name)
        .outerjoin(Branch, joined)
        .join(Customer, and_(Customer.vendor_id == r.vendor_id, Customer.id == r.customer_id))
        .where(condition)
        .order_by(r.id.asc() if oldest_first else r.id.desc())
    )
    count = select(r.id).outerjoin(Branch, joined).where(condition) if branch else select(r.id).where(condition)
    found = await paged(session, statement, count=count, page=page)
    return Paged([RedemptionRow(*row) for row in found.items], found.page, found.per_page, found.total, found.more)


@dataclass(frozen=True, slots=True)
class Offer:
    reward: Reward
    branches: list[Branch] | None
    customer_redemptions: int | None


@dataclass(frozen=True, slots=True)
class OfferPage:
    offers: list[Offer]
    total: int


async def list_offers(
    session: AsyncSession,
    clock: Clock,
    vendor_id: int,
    *,
    page: int,
    per_page: int,
    status: str | None,
    identifier: str | None,
    affordable: bool,
) -> OfferPage:
    """Filters on status only (REWARD-5). ``affordable`` needs a customer that exists: its lookup raises
    CUSTOMER_NOT_FOUND; otherwise an unmatched identifier only leaves ``customer_redemptions`` null."""
    customer_id: int | None = None
    balance = 0
    if identifier is not None:
        try:
            found = await CustomerReads(session, clock).lookup(vendor_id, identifier=identifier)
            customer_id, balance = found.id, found.balance
        except CustomerNotFound:
            if affordable:
                raise
    held = (
        select(func.count())
        .where(
            Redemption.vendor_id == Reward.vendor_id,
            Redemption.reward_id == Reward.id,
            Redemption.customer_id == customer_id,
            Redemption.status != NOT_COUNTED,
        )
        .scalar_subquery()
    )
    query = select(Reward, held).where(Reward.vendor_id == vendor_id, Reward.deleted_at.is_(None))
    if status is not None:
        query = query.where(Reward.status == status)
    if affordable:
        query = query.where(
            Reward.point_cost <= balance,
            Reward.max_redemptions_per_customer.is_(None) | (held < Reward.max_redemptions_per_customer),
        )
        if customer_id is not None:  # TIER-12: nor what the customer's tier does not reach
            blocking = await _out_of_reach(session, vendor_id, customer_id, clock.now())
            if blocking:
                query = query.where(Reward.min_tier.is_(None) | Reward.min_tier.not_in(blocking))
    total = await session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = (await session.execute(query.order_by(Reward.id).offset((page - 1) * per_page).limit(per_page))).all()
    ids = [reward.id for reward, _ in rows]
    by_reward: dict[int, list[Branch]] = {}
    if ids:
        pairs = await session.execute(
            select(RewardBranch.reward_id, Branch)
            .join(Branch, (Branch.vendor_id == RewardBranch.vendor_id) & (Branch.id == RewardBranch.branch_id))
            .where(RewardBranch.vendor_id == vendor_id, RewardBranch.reward_id.in_(ids))
            .order_by(Branch.external_id)
        )
        for reward_id, branch in pairs.all():
            by_reward.setdefault(reward_id, []).append(branch)
    offers = [
        Offer(reward, by_reward.get(reward.id), held_now if customer_id is not None else None)
        for reward, held_now in rows
    ]
    return OfferPage(offers, total)


async def _out_of_reach(session: AsyncSession, vendor_id: int, customer_id: int, now: datetime) -> list[str]:
    """The tier keys above the one the customer holds: a ``min_tier`` among them blocks it."""
    read = await tier_facts_of(session, vendor_id, customer_id, now)
    ladder, standing = ladder_from_read(read), standing_from_read(read, now)
    if ladder is None:
        return []
    return out_of_reach(ladder.rungs, standing.rung.key if standing is not None else None)


SHOWN = 50
"""The redemptions a customer's page lists, newest first."""


async def redemption(session: AsyncSession, vendor_id: int, code: str) -> Redemption:
    found = await session.scalar(
        select(Redemption).where(
            Redemption.vendor_id == vendor_id, Redemption.confirmation_code == code.strip().upper()
        )
    )
    if found is None:
        raise RedemptionNotFound("The shop has no redemption with this code.", code=code)
    return found


async def customer_redemptions(session: AsyncSession, vendor_id: int, customer_id: int) -> Sequence[Redemption]:
    found = await session.scalars(
        select(Redemption)
        .where(Redemption.vendor_id == vendor_id, Redemption.customer_id == customer_id)
        .order_by(Redemption.id.desc())
        .limit(SHOWN)
    )
    return found.all()


_BY_STATE = f"""
SELECT CASE WHEN status = '{StoredStatus.VALID}' AND expires_at IS NOT NULL AND expires_at <= %(now)s THEN 'expired'
            ELSE status END, count(*)
FROM redemptions GROUP BY 1
"""

STATES = (*(str(s) for s in StoredStatus), "expired")


async def redemptions_by_state(conn: AsyncConnection[Any], now: datetime) -> dict[str, int]:
    counts = dict.fromkeys(STATES, 0)
    for state, count in await (await conn.execute(_BY_STATE, {"now": now}, prepare=True)).fetchall():
        counts[state] = int(count)
    return counts
