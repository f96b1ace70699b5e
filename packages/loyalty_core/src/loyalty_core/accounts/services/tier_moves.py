"""The core work of the ``tier-moves`` job (TIER-15): after a ladder's ``PUT`` kept the ladder as it
stood in ``moves_from`` (TIER-8), every active customer (kept account, its merge family's months) is
classified under that ladder and under the one that applies now, by the one tier function; each
customer whose tier moved from one tier to another records one ``customer.tier_changed`` with the
customer as the API shows it now and ``previous_tier`` under the ladder before. ``moves_from`` is
cleared in the same transaction (the ladder's row locked first), so the moves are recorded once.
Moves to no tier (the plan lost ``tiers``) record none."""

from __future__ import annotations

from datetime import datetime

import msgspec
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.types import JSON

from loyalty_core.accounts.reads.customer import CustomerReads
from loyalty_core.clock import Clock
from loyalty_core.customers.models import CustomerStatus
from loyalty_core.customers.resources import CustomerTier
from loyalty_core.errors import DomainError
from loyalty_core.events.models import EventType
from loyalty_core.events.services.recording import first_id_after, record_event
from loyalty_core.tiers.events import CustomerTierChanged
from loyalty_core.tiers.models import TierLadder, first_day
from loyalty_core.tiers.reads import ladder_from_json, ladder_of, tier_of
from loyalty_core.tiers.rules import Ladder, TierBasis, first_counted_month, held, month_of

_MONTHS = text(
    """SELECT coalesce(c.merged_into_id, c.id) AS family, m.month, m.spend, m.points
FROM tier_months m JOIN customers c ON c.vendor_id = m.vendor_id AND c.id = m.customer_id
WHERE m.vendor_id = :vendor_id AND m.month >= :since AND m.month <= :until"""
)
_CUSTOMERS = text(
    f"""SELECT id FROM customers
WHERE vendor_id = :vendor_id AND merged_into_id IS NULL AND status = '{CustomerStatus.ACTIVE}' ORDER BY id"""
)

Months = dict[int, tuple[int, int]]


async def moving_vendors(session: AsyncSession) -> list[int]:
    """The vendors whose ladder has moves still to record."""
    found = await session.scalars(select(TierLadder.vendor_id).where(TierLadder.moves_from.is_not(None)))
    return list(found.all())


def _amounts(months: Months, basis: TierBasis) -> dict[int, int]:
    return {m: (points if basis == TierBasis.POINTS else spend) for m, (spend, points) in months.items()}


async def record_moves(session: AsyncSession, clock: Clock, vendor_id: int) -> int:
    """The vendor's moves since its ladder's ``moves_from``, one event each; how many were recorded."""
    ladder = await session.scalar(select(TierLadder).where(TierLadder.vendor_id == vendor_id).with_for_update())
    if ladder is None or ladder.moves_from is None:
        return 0
    before = ladder_from_json(ladder.moves_from)
    ladder.moves_from = None
    await session.flush()
    now = clock.now()
    after = await ladder_of(session, vendor_id, paying=True)
    if after is None or not after.rungs or not before.rungs:
        return 0
    families = await _families(session, vendor_id, (before, after), (now,))
    reads = CustomerReads(session, clock)
    recorded = 0
    for (customer_id,) in (await session.execute(_CUSTOMERS, {"vendor_id": vendor_id})).all():
        months = families.get(customer_id, {})
        was = held(_amounts(months, before.basis), before, now)
        now_held = held(_amounts(months, after.basis), after, now)
        if was.rung.key == now_held.rung.key:
            continue
        view = await reads.get(vendor_id, customer_id)
        await record_event(
            session, clock, vendor_id, CustomerTierChanged.moved(view, tier_of(was)), customer_id=customer_id
        )
        recorded += 1
    return recorded


async def reviewed_vendors(session: AsyncSession) -> list[int]:
    """The vendors with a ladder, for the ``tier-review`` job."""
    return list((await session.scalars(select(TierLadder.vendor_id))).all())


async def record_lapses(session: AsyncSession, clock: Clock, vendor_id: int) -> int:
    """TIER-17: the lapses the clock made since the ladder's last review, one
    ``customer.tier_changed`` each, ``previous_tier`` as held at that review; the review instant
    moves to now in the same transaction (the ladder's row locked first), so each is recorded once.
    The first review only sets the instant."""
    ladder = await session.scalar(select(TierLadder).where(TierLadder.vendor_id == vendor_id).with_for_update())
    if ladder is None:
        return 0
    now = clock.now()
    since, ladder.reviewed_at = ladder.reviewed_at, now
    await session.flush()
    applies = await ladder_of(session, vendor_id, paying=True)
    if since is None or since >= now or applies is None or not applies.rungs:
        return 0
    families = await _families(session, vendor_id, (applies,), (since, now))
    told = await _last_told(session, vendor_id, since)
    order = {rung.key: i for i, rung in enumerate(applies.rungs)}
    reads = CustomerReads(session, clock)
    recorded = 0
    for family, months in families.items():
        amounts = _amounts(months, applies.basis)
        held_now = held(amounts, applies, now)
        # TIER-19: a purchase, a return or a merge since the review told the family's tier last
        previous = told.get(family) or tier_of(held(amounts, applies, since))
        if previous is None or previous.key not in order or order[held_now.rung.key] >= order[previous.key]:
            continue
        try:
            view = await reads.get(vendor_id, family)
        except DomainError:  # closed or anonymized since: its family's tier is no one's now
            continue
        if view.status != CustomerStatus.ACTIVE or view.tier is None:
            continue
        await record_event(session, clock, vendor_id, CustomerTierChanged.moved(view, previous), customer_id=family)
        recorded += 1
    return recorded


_TOLD = text(
    f"""SELECT DISTINCT ON (e.customer_id) e.customer_id, e.data -> 'tier' AS tier
FROM events e
WHERE e.vendor_id = :vendor_id AND e.id >= :first_id AND e.type = '{EventType.CUSTOMER_TIER_CHANGED}'
ORDER BY e.customer_id, e.id DESC"""
).columns(tier=JSON)


async def _last_told(session: AsyncSession, vendor_id: int, since: datetime) -> dict[int, CustomerTier]:
    """TIER-19: each customer's tier as its last ``customer.tier_changed`` since ``since`` told it
    (the events' key sorts as their instants), so a lapse a write recorded is not recorded again."""
    rows = await session.execute(_TOLD, {"vendor_id": vendor_id, "first_id": first_id_after(since)})
    return {
        customer_id: msgspec.convert(tier, CustomerTier, strict=False)
        for customer_id, tier in rows
        if customer_id is not None and tier is not None
    }


async def _families(
    session: AsyncSession, vendor_id: int, ladders: tuple[Ladder, ...], times: tuple[datetime, ...]
) -> dict[int, Months]:
    """Each family's months (cents, points) that any of ``ladders`` counts at any of ``times``."""
    params = {
        "vendor_id": vendor_id,
        "since": first_day(min(first_counted_month(ladder, at) for ladder in ladders for at in times)),
        "until": first_day(max(month_of(at) for at in times)),
    }
    families: dict[int, Months] = {}
    for family, day, spend, points in (await session.execute(_MONTHS, params)).all():
        months = families.setdefault(family, {})
        month = day.year * 12 + day.month - 1
        old_spend, old_points = months.get(month, (0, 0))
        months[month] = (old_spend + spend, old_points + points)
    return families
