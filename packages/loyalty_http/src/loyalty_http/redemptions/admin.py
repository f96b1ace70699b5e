"""The admin portal's redemptions: the list, cancel, give at the counter (REDEEM-10 to
REDEEM-12)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from litestar import Controller, Request, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from loyalty_core.clock import Clock
from loyalty_core.redemptions.resources import row_view
from loyalty_core.rewards.errors import RewardNotFound
from loyalty_http.access.auth import ADMIN_CAUSER
from loyalty_http.params import KnownVendor, PortalRedemptionsDep, RedemptionListDep, given
from loyalty_http.redemptions import schemas as s
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.pagination import DEFAULT_PER_PAGE, Page, PerPage, page_number, paginate
from loyalty_http.wire.paths import parse_id


class GiveBody(msgspec.Struct):
    customer_id: Annotated[int, msgspec.Meta(ge=1, le=2**63 - 1)]


class RedemptionQuery(msgspec.Struct):
    customer_id: Annotated[int, msgspec.Meta(ge=1, le=2**63 - 1)] | msgspec.UnsetType = msgspec.UNSET
    status: Literal["valid", "used", "cancelled", "expired"] | msgspec.UnsetType = msgspec.UNSET
    code: Annotated[str, msgspec.Meta(max_length=64)] | msgspec.UnsetType = msgspec.UNSET
    per_page: PerPage = DEFAULT_PER_PAGE


class AdminRedemptionsController(Controller):
    path = "/admin/v1/vendors/{vendor_id:str}"

    @get("/redemptions", opt=reads(auth="admin", query=RedemptionQuery))
    async def list_redemptions(
        self,
        request: Request[Any, Any, Any],
        params: NamedDependency[RedemptionQuery],
        known_vendor: KnownVendor,
        redemption_list: RedemptionListDep,
        clock: NamedDependency[Clock],
    ) -> Envelope[Page[s.RedemptionBody]]:
        """Newest first; ``expired`` is a valid code whose time has run out."""
        page = page_number(request)
        found = await redemption_list.redemptions(
            known_vendor,
            customer_id=given(params.customer_id),
            status=given(params.status),
            code=given(params.code),
            page=page,
            per_page=params.per_page,
        )
        now = clock.now()
        items = [s.RedemptionBody.of(row_view(r, branch), now) for r, branch in found.items]
        return Envelope(paginate(request, items, total=found.total, page=page, per_page=params.per_page))

    @post(
        "/redemptions/{code:str}/cancel",
        opt=reads(auth="admin", errors=("CODE_CANCELLED", "CODE_EXPIRED")),
        status_code=200,
    )
    async def cancel(
        self,
        code: FromPath[str],
        known_vendor: KnownVendor,
        portal_redemptions: PortalRedemptionsDep,
        clock: NamedDependency[Clock],
    ) -> Envelope[s.RedemptionBody]:
        redemption, branch = await portal_redemptions.cancel(known_vendor, code, causer=ADMIN_CAUSER)
        return Envelope(s.RedemptionBody.of(row_view(redemption, branch), clock.now()))

    @post(
        "/rewards/{reward_id:str}/give",
        opt=reads(
            auth="admin",
            body=GiveBody,
            errors=(
                "CUSTOMER_NOT_FOUND",
                "CUSTOMER_DEACTIVATED",
                "WALLET_NOT_FOUND",
                "REWARD_UNAVAILABLE",
                "TIER_REQUIRED",
                "REDEMPTION_LIMIT_REACHED",
                "OUT_OF_STOCK",
                "INSUFFICIENT_BALANCE",
            ),
        ),
        status_code=201,
    )
    async def give(
        self,
        reward_id: FromPath[str],
        payload: NamedDependency[GiveBody],
        known_vendor: KnownVendor,
        portal_redemptions: PortalRedemptionsDep,
        clock: NamedDependency[Clock],
    ) -> Envelope[s.RedemptionBody]:
        """201 with the redemption in state ``used``: no till can verify it (REDEEM-12)."""
        reward = parse_id(reward_id, RewardNotFound, "The vendor has no reward with this id.", reward_id=reward_id)
        redemption = await portal_redemptions.give(known_vendor, reward, payload.customer_id, causer=ADMIN_CAUSER)
        return Envelope(
            s.RedemptionBody.of(row_view(redemption, None), clock.now(), remaining_balance=redemption.remaining_balance)
        )
