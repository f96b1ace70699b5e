"""Admin API for earn rules and campaigns (EARN-12, EARN-13): create, list, read, update, delete."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, delete, get, patch, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from loyalty_core.earning.errors import CampaignNotFound, EarnRuleNotFound, PlanFeatureUnavailable
from loyalty_core.earning.rules.terms import CampaignData, EarnRuleData
from loyalty_core.earning.services import CampaignService, EarnRuleService
from loyalty_core.errors import ValidationFailed
from loyalty_http.earning import schemas as s
from loyalty_http.params import KnownVendor, present
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.pagination import Page, page_number, paginate
from loyalty_http.wire.paths import parse_id

EarnRules = NamedDependency[EarnRuleService]
Campaigns = NamedDependency[CampaignService]
CAMPAIGN_WRITE_ERRORS = (PlanFeatureUnavailable, "BRANCH_NOT_FOUND")


def _rule_id(raw: str) -> int:
    return parse_id(raw, EarnRuleNotFound, "The vendor has no earn rule with this id.", earn_rule_id=raw)


def _campaign_id(raw: str) -> int:
    return parse_id(raw, CampaignNotFound, "The vendor has no campaign with this id.", campaign_id=raw)


def _require(values: dict[str, Any], names: tuple[str, ...]) -> None:
    missing = [f for f in names if values.get(f) is None]
    if missing:
        raise ValidationFailed("Required fields are missing.", {f: ["validation.required"] for f in missing})


class AdminEarnRulesController(Controller):
    path = "/admin/v1/vendors/{vendor_id:str}/earn-rules"

    @post("/", opt=reads(auth="admin", body=s.EarnRuleCreate), status_code=201)
    async def create_earn_rule(
        self, payload: NamedDependency[s.EarnRuleCreate], known_vendor: KnownVendor, earn_rules: EarnRules
    ) -> Envelope[s.EarnRuleShown]:
        values = present(payload)
        _require(values, ("name", "points_per_unit", "unit_amount"))
        return Envelope(s.EarnRuleShown.of(await earn_rules.create(known_vendor, EarnRuleData(**values))))

    @get("/", opt=reads(auth="admin", query=s.ListQuery))
    async def list_earn_rules(
        self,
        request: Request[Any, Any, Any],
        params: NamedDependency[s.ListQuery],
        known_vendor: KnownVendor,
        earn_rules: EarnRules,
    ) -> Envelope[Page[s.EarnRuleShown]]:
        page = page_number(request)
        found = await earn_rules.list_page(known_vendor, page=page, per_page=params.per_page)
        items = [s.EarnRuleShown.of(r) for r in found.items]
        return Envelope(paginate(request, items, total=found.total, page=page, per_page=params.per_page))

    @get("/{rule_id:str}", opt=reads(auth="admin", errors=(EarnRuleNotFound,)))
    async def get_earn_rule(
        self, rule_id: FromPath[str], known_vendor: KnownVendor, earn_rules: EarnRules
    ) -> Envelope[s.EarnRuleShown]:
        return Envelope(s.EarnRuleShown.of(await earn_rules.get(known_vendor, _rule_id(rule_id))))

    @patch("/{rule_id:str}", opt=reads(auth="admin", body=s.EarnRulePatch, errors=(EarnRuleNotFound,)))
    async def update_earn_rule(
        self,
        rule_id: FromPath[str],
        payload: NamedDependency[s.EarnRulePatch],
        known_vendor: KnownVendor,
        earn_rules: EarnRules,
    ) -> Envelope[s.EarnRuleShown]:
        rule = await earn_rules.update(known_vendor, _rule_id(rule_id), present(payload))
        return Envelope(s.EarnRuleShown.of(rule))

    @delete("/{rule_id:str}", opt=reads(auth="admin", errors=(EarnRuleNotFound,)), status_code=204)
    async def delete_earn_rule(self, rule_id: FromPath[str], known_vendor: KnownVendor, earn_rules: EarnRules) -> None:
        await earn_rules.delete(known_vendor, _rule_id(rule_id))


class AdminCampaignsController(Controller):
    path = "/admin/v1/vendors/{vendor_id:str}/campaigns"

    @post("/", opt=reads(auth="admin", body=s.CampaignCreate, errors=CAMPAIGN_WRITE_ERRORS), status_code=201)
    async def create_campaign(
        self, payload: NamedDependency[s.CampaignCreate], known_vendor: KnownVendor, campaigns: Campaigns
    ) -> Envelope[s.CampaignShown]:
        values = present(payload)
        _require(values, ("name", "kind"))
        for listed in ("skus", "branches"):
            if values.get(listed) is not None:
                values[listed] = tuple(values[listed])
        campaign = await campaigns.create(known_vendor, CampaignData(**values))
        return Envelope(s.CampaignShown.of(campaign))

    @get("/", opt=reads(auth="admin", query=s.ListQuery))
    async def list_campaigns(
        self,
        request: Request[Any, Any, Any],
        params: NamedDependency[s.ListQuery],
        known_vendor: KnownVendor,
        campaigns: Campaigns,
    ) -> Envelope[Page[s.CampaignShown]]:
        page = page_number(request)
        found = await campaigns.list_page(known_vendor, page=page, per_page=params.per_page)
        items = [s.CampaignShown.of(c) for c in found.items]
        return Envelope(paginate(request, items, total=found.total, page=page, per_page=params.per_page))

    @get("/{campaign_id:str}", opt=reads(auth="admin", errors=(CampaignNotFound,)))
    async def get_campaign(
        self, campaign_id: FromPath[str], known_vendor: KnownVendor, campaigns: Campaigns
    ) -> Envelope[s.CampaignShown]:
        return Envelope(s.CampaignShown.of(await campaigns.get(known_vendor, _campaign_id(campaign_id))))

    @patch(
        "/{campaign_id:str}",
        opt=reads(auth="admin", body=s.CampaignPatch, errors=(CampaignNotFound, *CAMPAIGN_WRITE_ERRORS)),
    )
    async def update_campaign(
        self,
        campaign_id: FromPath[str],
        payload: NamedDependency[s.CampaignPatch],
        known_vendor: KnownVendor,
        campaigns: Campaigns,
    ) -> Envelope[s.CampaignShown]:
        campaign = await campaigns.update(known_vendor, _campaign_id(campaign_id), present(payload))
        return Envelope(s.CampaignShown.of(campaign))

    @delete("/{campaign_id:str}", opt=reads(auth="admin", errors=(CampaignNotFound,)), status_code=204)
    async def delete_campaign(
        self, campaign_id: FromPath[str], known_vendor: KnownVendor, campaigns: Campaigns
    ) -> None:
        """PLAN-2: the row goes, so the campaign frees its place under ``max_campaigns``."""
        await campaigns.delete(known_vendor, _campaign_id(campaign_id))
