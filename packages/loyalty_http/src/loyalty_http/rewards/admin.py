"""Admin API for rewards (back-office contract, section 2 "Rewards and vouchers")."""

from __future__ import annotations

from litestar import Controller, delete
from litestar.di import NamedDependency
from litestar.params import FromPath
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.rewards.errors import RewardNotFound
from loyalty_http.params import Rewards, vendor_id_of
from loyalty_http.route_options import reads
from loyalty_http.wire.paths import parse_id

Db = NamedDependency[AsyncSession]
Clk = NamedDependency[Clock]


class AdminRewardsController(Controller):
    path = "/admin/v1/vendors/{vendor_id:str}/rewards"

    @delete("/{reward_id:str}", opt=reads(auth="admin"), status_code=204)
    async def delete_reward(self, vendor_id: FromPath[str], reward_id: FromPath[str], rewards: Rewards) -> None:
        """The admin-portal delete: soft, so the reward's idempotency key stays used (spec: rule 2)."""
        reward = parse_id(reward_id, RewardNotFound, "The vendor has no reward with this id.", reward_id=reward_id)
        await rewards.delete(vendor_id_of(vendor_id), reward)
