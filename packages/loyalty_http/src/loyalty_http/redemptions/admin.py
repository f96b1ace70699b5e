"""The admin portal's redemption actions: cancel, give at the counter (REDEEM-10 to
REDEEM-12)."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from loyalty_core.clock import Clock
from loyalty_core.redemptions.resources import row_view
from loyalty_core.rewards.errors import RewardNotFound
from loyalty_http.params import KnownVendor, PortalRedemptionsDep
from loyalty_http.redemptions import schemas as s
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.paths import parse_id


class GiveBody(msgspec.Struct):
    customer_id: Annotated[int, msgspec.Meta(ge=1, le=2**63 - 1)]


class AdminRedemptionsController(Controller):
    path = "/admin/v1/vendors/{vendor_id:str}"

    @post("/redemptions/{code:str}/cancel", opt=reads(auth="admin"), status_code=200)
    async def cancel(
        self,
        code: FromPath[str],
        known_vendor: KnownVendor,
        portal_redemptions: PortalRedemptionsDep,
        clock: NamedDependency[Clock],
    ) -> Envelope[s.RedemptionBody]:
        redemption, branch = await portal_redemptions.cancel(known_vendor, code)
        return Envelope(s.RedemptionBody.of(row_view(redemption, branch), clock.now()))

    @post("/rewards/{reward_id:str}/give", opt=reads(auth="admin", body=GiveBody), status_code=201)
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
        redemption = await portal_redemptions.give(known_vendor, reward, payload.customer_id)
        return Envelope(
            s.RedemptionBody.of(row_view(redemption, None), clock.now(), remaining_balance=redemption.remaining_balance)
        )
