"""The admin API's earn rules and campaigns: create, list, get, update and delete, vendor first.

Every update raises ``version`` by one. Campaign writes obey the vendor's plan: a family the plan
lacks is refused, and the number of campaigns held is capped by ``max_campaigns``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Generic, TypeVar

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.earning import errors as e
from loyalty_core.earning.models import Campaign, EarnRule
from loyalty_core.earning.rules import validation
from loyalty_core.earning.rules.terms import CampaignData, CampaignTerms, EarnRuleData, Family
from loyalty_core.errors import ValidationFailed
from loyalty_core.tenancy.errors import BranchNotFound
from loyalty_core.tenancy.models import Branch, Plan, Vendor
from loyalty_core.tenancy.services import ceilings

T = TypeVar("T", EarnRule, Campaign)
FEATURE_OF_FAMILY: dict[str, str] = {
    Family.TRANSACTION: "feature_campaigns",
    Family.CUSTOMER_MOMENT: "feature_customer_moments",
}
"""EARN-12: campaigns, and customer-moment campaigns, are features of a plan."""


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: list[T]
    total: int


class EarnRuleService:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def create(self, vendor_id: int, data: EarnRuleData) -> EarnRule:
        await ceilings.plan_of(self._session, vendor_id)
        values = validation.earn_rule({f.name: getattr(data, f.name) for f in fields(data)})
        now = self._clock.now()
        rule = EarnRule(vendor_id=vendor_id, version=1, created_at=now, updated_at=now, **values)
        self._session.add(rule)
        await self._session.flush()
        await _terms_changed(self._session, vendor_id)
        return rule

    async def list_page(self, vendor_id: int, *, page: int, per_page: int) -> Page[EarnRule]:
        return await _page(self._session, EarnRule, vendor_id, page=page, per_page=per_page)

    async def get(self, vendor_id: int, rule_id: int) -> EarnRule:
        return await _one(self._session, EarnRule, vendor_id, rule_id, for_update=False)

    async def update(
        self, vendor_id: int, rule_id: int, changes: Mapping[str, object], *, expected_version: int | None = None
    ) -> EarnRule:
        """A partial update (``PATCH .../earn-rules/{id}``): the fields present change, ``version`` + 1.
        With ``expected_version``, an edit of a version since replaced is refused (EARN-16)."""
        _known(changes, validation.EARN_RULE_FIELDS)
        rule = await _one(self._session, EarnRule, vendor_id, rule_id, for_update=True)
        _check_version(rule, expected_version)
        current = {field: getattr(rule, field) for field in validation.EARN_RULE_FIELDS}
        values = validation.earn_rule({**current, **changes})
        return await _apply(self._session, self._clock, rule, values)

    async def delete(self, vendor_id: int, rule_id: int) -> None:
        await _delete(self._session, EarnRule, vendor_id, rule_id)


class CampaignService:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def create(self, vendor_id: int, data: CampaignData) -> Campaign:
        """Checks run in this order: the vendor, the fields, the plan's feature, its ceiling, the
        branches. The vendor row is locked first, so concurrent creations meet the ceiling one by one."""
        plan = await ceilings.plan_of(self._session, vendor_id, lock=True)
        values = validation.campaign({f.name: getattr(data, f.name) for f in fields(data)})
        _check_feature(plan, str(values["family"]))
        held = select(func.count()).select_from(Campaign).where(Campaign.vendor_id == vendor_id)
        await ceilings.ensure_room(self._session, plan.max_campaigns, held, ceilings.CAMPAIGNS)
        await _check_branches(self._session, vendor_id, values["branches"])
        now = self._clock.now()
        campaign = Campaign(vendor_id=vendor_id, version=1, created_at=now, updated_at=now, **values)
        self._session.add(campaign)
        await self._session.flush()
        await _terms_changed(self._session, vendor_id)
        return campaign

    async def list_page(self, vendor_id: int, *, page: int, per_page: int) -> Page[Campaign]:
        return await _page(self._session, Campaign, vendor_id, page=page, per_page=per_page)

    async def get(self, vendor_id: int, campaign_id: int) -> Campaign:
        return await _one(self._session, Campaign, vendor_id, campaign_id, for_update=False)

    async def update(
        self,
        vendor_id: int,
        campaign_id: int,
        changes: Mapping[str, object],
        *,
        expected_version: int | None = None,
    ) -> Campaign:
        """A partial update (``PATCH .../campaigns/{id}``) checked on the campaign as it would be after
        it; ``version`` + 1. Moving to a family the plan lacks is refused like creating one. With
        ``expected_version``, an edit of a version since replaced is refused (EARN-16)."""
        _known(changes, validation.CAMPAIGN_FIELDS)
        campaign = await _one(self._session, Campaign, vendor_id, campaign_id, for_update=True)
        _check_version(campaign, expected_version)
        current = {field: getattr(campaign, field) for field in validation.CAMPAIGN_FIELDS}
        values = validation.campaign({**current, **changes})
        if values["family"] != campaign.family:
            _check_feature(await ceilings.plan_of(self._session, vendor_id), str(values["family"]))
        if "branches" in changes:
            await _check_branches(self._session, vendor_id, values["branches"])
        return await _apply(self._session, self._clock, campaign, values)

    async def delete(self, vendor_id: int, campaign_id: int) -> None:
        """PLAN-2: a deleted campaign frees its place under ``max_campaigns``; transactions keep
        their own copy of what it paid, so the row itself goes."""
        await _delete(self._session, Campaign, vendor_id, campaign_id)


def campaign_terms(campaign: Campaign) -> CampaignTerms:
    return CampaignTerms(
        id=campaign.id,
        name=campaign.name,
        kind=campaign.kind,
        family=campaign.family,
        moment=campaign.moment,
        multiplier=campaign.multiplier,
        points=campaign.points,
        skus=frozenset(campaign.skus) if campaign.skus is not None else None,
        max_points_per_transaction=campaign.max_points_per_transaction,
        window_days=campaign.window_days,
        inactive_days=campaign.inactive_days,
        combinable=campaign.combinable,
        min_transaction_amount=campaign.min_transaction_amount,
        starts_on=campaign.starts_on,
        ends_on=campaign.ends_on,
        branches=frozenset(campaign.branches) if campaign.branches is not None else None,
        active=campaign.active,
        version=campaign.version,
    )


def _known(changes: Mapping[str, object], allowed: frozenset[str]) -> None:
    unknown = sorted(set(changes) - allowed)
    if unknown:
        raise ValidationFailed("Unknown fields.", {field: ["This field cannot be changed."] for field in unknown})


def _check_version(row: EarnRule | Campaign, expected: int | None) -> None:
    """EARN-16: checked on the locked row, so of two edits of one version only the first is kept."""
    if expected is not None and expected != row.version:
        what = "earn rule" if isinstance(row, EarnRule) else "campaign"
        raise e.VersionConflict(
            f"Someone changed this {what} since you opened it (now version {row.version}). "
            "Reload it and make your change again.",
            expected_version=expected,
            version=row.version,
        )


def _check_feature(plan: Plan, family: str) -> None:
    feature = FEATURE_OF_FAMILY[family]
    if not getattr(plan, feature):
        raise e.PlanFeatureUnavailable(
            f"The vendor's plan does not include {family} campaigns.", family=family, feature=feature
        )


async def _check_branches(session: AsyncSession, vendor_id: int, branches: object) -> None:
    """Every listed key must name a branch of the vendor; a deactivated one still counts as found."""
    if not isinstance(branches, list) or not branches:
        return
    found = set(
        await session.scalars(
            select(Branch.external_id).where(Branch.vendor_id == vendor_id, Branch.external_id.in_(branches))
        )
    )
    missing = [key for key in branches if key not in found]
    if missing:
        raise BranchNotFound("No branch of the vendor has this key.", branches=missing)


async def _one(session: AsyncSession, model: type[T], vendor_id: int, row_id: int, *, for_update: bool) -> T:
    stmt = select(model).where(model.vendor_id == vendor_id, model.id == row_id)
    if for_update:
        stmt = stmt.with_for_update()
    row = await session.scalar(stmt)
    if row is None:
        await ceilings.plan_of(session, vendor_id)
        raise _not_found(model, row_id)
    return row


async def _page(session: AsyncSession, model: type[T], vendor_id: int, *, page: int, per_page: int) -> Page[T]:
    """Oldest first, by id, so pages never shift when a row is edited."""
    await ceilings.plan_of(session, vendor_id)
    total = await session.scalar(select(func.count()).select_from(model).where(model.vendor_id == vendor_id)) or 0
    rows = await session.scalars(
        select(model)
        .where(model.vendor_id == vendor_id)
        .order_by(model.id)
        .offset((page - 1) * per_page)
        .limit(per_page)
    )
    return Page(list(rows), total)


async def _apply(session: AsyncSession, clock: Clock, row: T, values: Mapping[str, object]) -> T:
    for field, value in values.items():
        setattr(row, field, value)
    row.version += 1
    row.updated_at = clock.now()
    await session.flush()
    await _terms_changed(session, row.vendor_id)
    return row


async def _delete(session: AsyncSession, model: type[T], vendor_id: int, row_id: int) -> None:
    deleted = await session.scalar(
        delete(model).where(model.vendor_id == vendor_id, model.id == row_id).returning(model.id),
        execution_options={"synchronize_session": False},
    )
    if deleted is None:
        await ceilings.plan_of(session, vendor_id)
        raise _not_found(model, row_id)
    await _terms_changed(session, vendor_id)


async def _terms_changed(session: AsyncSession, vendor_id: int) -> None:
    """Every process's cached terms of the vendor are keyed by this number: the next purchase
    anywhere reads the change."""
    await session.execute(
        update(Vendor).where(Vendor.id == vendor_id).values(earning_version=Vendor.earning_version + 1),
        execution_options={"synchronize_session": False},
    )


def _not_found(model: type[EarnRule] | type[Campaign], row_id: int) -> Exception:
    if model is EarnRule:
        return e.EarnRuleNotFound("The vendor has no earn rule with this id.", earn_rule_id=row_id)
    return e.CampaignNotFound("The vendor has no campaign with this id.", campaign_id=row_id)
