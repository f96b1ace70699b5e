"""The ladder's one writer (TIER-1, TIER-7, TIER-8): ``PUT`` writes it whole, keeping each key's
tier row (and so its ``id``), ``DELETE`` removes it; both need the plan's ``tiers`` feature (TIER-5).

A ``PUT`` that changes an existing ladder raises its ``version`` and, unless the ``tier-moves`` job
still has an earlier change to record, keeps the ladder as it stood in ``moves_from``, in the same
transaction: the job compares every customer's tier under ``moves_from`` and under the ladder now,
records one ``customer.tier_changed`` per customer moved, and clears ``moves_from``. Queuing the job
after the commit is the caller's (the API's and the portal's request hooks)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.errors import ValidationFailed
from loyalty_core.tenancy.errors import PlanFeatureUnavailable
from loyalty_core.tenancy.services.ceilings import plan_of
from loyalty_core.tiers.errors import LadderNotFound
from loyalty_core.tiers.models import Tier, TierLadder
from loyalty_core.tiers.resources import Ladder
from loyalty_core.tiers.rules import RungInput, TierBasis, ladder_problems


@dataclass(frozen=True, slots=True)
class RungData:
    """A tier as a ladder write gives it (bounds checked by the caller's struct or form)."""

    key: str
    name: str
    threshold: int
    multiplier_percent: int
    description: str | None = None


@dataclass(frozen=True, slots=True)
class LadderData:
    basis: TierBasis
    tiers: Sequence[RungData]
    period_months: int = 12
    grace_months: int = 0


def ladder_json(ladder: TierLadder, tiers: Sequence[Tier]) -> dict[str, Any]:
    """A stored ladder as ``moves_from`` keeps it: ``tiers.reads.ladder_from_json`` reads it back."""
    rungs = [[t.id, t.key, t.name, t.threshold, t.multiplier_percent] for t in sorted(tiers, key=lambda t: t.position)]
    return {
        "basis": ladder.basis,
        "period_months": ladder.period_months,
        "grace_months": ladder.grace_months,
        "tiers": rungs,
    }


def not_found() -> LadderNotFound:
    return LadderNotFound("The vendor has no tier ladder.", resource="tiers")


class TierService:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def _stored(self, vendor_id: int, *, lock: bool = False) -> tuple[TierLadder, list[Tier]] | None:
        query = select(TierLadder).where(TierLadder.vendor_id == vendor_id)
        ladder = await self._session.scalar(query.with_for_update() if lock else query)
        if ladder is None:
            return None
        tiers = await self._session.scalars(
            select(Tier).where(Tier.vendor_id == vendor_id, Tier.ladder_id == ladder.id).order_by(Tier.position)
        )
        return ladder, list(tiers)

    async def get(self, vendor_id: int, *, paying: bool = False) -> Ladder:
        """The stored ladder (the admin read); with ``paying`` (the public read), NOT_FOUND also while
        the plan lacks ``tiers`` (TIER-5, TIER-7)."""
        if paying and not (await plan_of(self._session, vendor_id)).feature_tiers:
            raise not_found()
        stored = await self._stored(vendor_id)
        if stored is None:
            raise not_found()
        return Ladder.of(*stored)

    async def _feature(self, vendor_id: int) -> None:
        # the vendor row is held until commit: a vendor's ladder writes queue, so the first PUT of two
        # racing ones creates the ladder and the other updates it
        if not (await plan_of(self._session, vendor_id, lock=True)).feature_tiers:
            raise PlanFeatureUnavailable(
                "The vendor's plan does not include tiers.", feature="tiers", vendor_id=vendor_id
            )

    async def put_ladder(self, vendor_id: int, data: LadderData) -> Ladder:
        """TIER-1: the ladder written whole; a key already on the ladder keeps its tier row and id."""
        await self._feature(vendor_id)
        problems = ladder_problems([RungInput(r.key, r.threshold) for r in data.tiers])
        if problems:
            raise ValidationFailed("The ladder's tiers are not consistent.", problems)
        stored = await self._stored(vendor_id, lock=True)
        if stored is None:
            ladder = TierLadder(vendor_id=vendor_id, version=1)
            self._session.add(ladder)
            old: dict[str, Tier] = {}
        else:
            ladder, tiers = stored
            if ladder.moves_from is None:
                ladder.moves_from = ladder_json(ladder, tiers)
            ladder.version += 1
            old = {t.key: t for t in tiers}
        ladder.basis = data.basis
        ladder.period_months = data.period_months
        ladder.grace_months = data.grace_months
        await self._session.flush()
        kept = {r.key for r in data.tiers}
        gone = [t.id for key, t in old.items() if key not in kept]
        if gone:
            await self._session.execute(delete(Tier).where(Tier.vendor_id == vendor_id, Tier.id.in_(gone)))
        written: list[Tier] = []
        for position, rung in enumerate(data.tiers):
            tier = old.get(rung.key) or Tier(vendor_id=vendor_id, ladder_id=ladder.id, key=rung.key)
            tier.position = position
            tier.name = rung.name
            tier.threshold = rung.threshold
            tier.multiplier_percent = rung.multiplier_percent
            tier.description = rung.description
            if rung.key not in old:
                self._session.add(tier)
            written.append(tier)
        await self._session.flush()
        return Ladder.of(ladder, written)

    async def delete_ladder(self, vendor_id: int) -> None:
        """The ladder removed: customers then have no tier (no events, TIER-7)."""
        await self._feature(vendor_id)
        stored = await self._stored(vendor_id, lock=True)
        if stored is None:
            raise not_found()
        ladder, _ = stored
        await self._session.execute(delete(Tier).where(Tier.vendor_id == vendor_id, Tier.ladder_id == ladder.id))
        await self._session.delete(ladder)
        await self._session.flush()
