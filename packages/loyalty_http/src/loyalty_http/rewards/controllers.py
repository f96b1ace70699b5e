"""GET /api/v1/rewards (REWARD-5)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get
from litestar.di import NamedDependency
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.errors import ValidationFailed
from loyalty_core.redemptions.reads import list_offers
from loyalty_core.rewards.models import RewardStatus
from loyalty_core.tenancy.rules.access import VendorContext
from loyalty_http.params import given
from loyalty_http.rewards import schemas as s
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.pagination import Page, page_number, paginate


class RewardController(Controller):
    path = "/api/v1/rewards"

    @get("/", opt=reads(query=s.RewardQuery, errors=("CUSTOMER_NOT_FOUND",)))
    async def list_rewards(
        self,
        request: Request[Any, Any, Any],
        params: NamedDependency[s.RewardQuery],
        vendor: NamedDependency[VendorContext],
        db: NamedDependency[AsyncSession],
        clock: NamedDependency[Clock],
    ) -> Envelope[Page[s.RewardListed]]:
        affordable = given(params.affordable) in ("true", "1")
        identifier = given(params.identifier)
        if affordable and not (identifier or "").strip():
            # INPUT-19: identifier is validated only when affordable is on
            raise ValidationFailed("The identifier is required.", {"identifier": ["validation.required"]})
        page = page_number(request)
        found = await list_offers(
            db,
            clock,
            vendor.vendor_id,
            page=page,
            per_page=params.per_page,
            status=RewardStatus.ACTIVE,
            identifier=identifier,
            affordable=affordable,
        )
        if given(params.status) == RewardStatus.INACTIVE:
            # the public list shows what a customer can be offered: ``status=inactive`` finds nothing
            return Envelope(paginate(request, [], total=0, page=page, per_page=params.per_page))
        items = [s.RewardListed.of(o.reward, o.branches, o.customer_redemptions) for o in found.offers]
        return Envelope(paginate(request, items, total=found.total, page=page, per_page=params.per_page))
