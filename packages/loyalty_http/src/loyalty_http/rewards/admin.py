"""Admin API for rewards: create, list (every status), read, update, delete."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, delete, get, patch, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from loyalty_core.errors import ValidationFailed
from loyalty_core.rewards.errors import RewardNotFound
from loyalty_http.params import KnownVendor, RewardReadsDep, Rewards, RewardWriter, given, present, vendor_id_of
from loyalty_http.rewards import schemas as s
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.pagination import Page, page_number, paginate
from loyalty_http.wire.paths import parse_id


def _reward_id(raw: str) -> int:
    return parse_id(raw, RewardNotFound, "The vendor has no reward with this id.", reward_id=raw)


class AdminRewardsController(Controller):
    path = "/admin/v1/vendors/{vendor_id:str}/rewards"

    @post("/", opt=reads(auth="admin", body=s.RewardCreate, errors=("BRANCH_NOT_FOUND",)), status_code=201)
    async def create_reward(
        self, payload: NamedDependency[s.RewardCreate], known_vendor: KnownVendor, reward_writes: RewardWriter
    ) -> Envelope[s.RewardAdmin]:
        values = present(payload)
        missing = [f for f in ("type", "name", "point_cost") if f not in values]
        if missing:
            raise ValidationFailed("Required fields are missing.", {f: ["validation.required"] for f in missing})
        reward, branches = await reward_writes.create(known_vendor, values)
        return Envelope(s.RewardAdmin.of(reward, branches))

    @get("/", opt=reads(auth="admin", query=s.RewardAdminQuery))
    async def list_rewards(
        self,
        request: Request[Any, Any, Any],
        params: NamedDependency[s.RewardAdminQuery],
        known_vendor: KnownVendor,
        reward_reads: RewardReadsDep,
    ) -> Envelope[Page[s.RewardAdmin]]:
        page = page_number(request)
        found = await reward_reads.rewards(
            known_vendor, status=given(params.status), page=page, per_page=params.per_page
        )
        items = [s.RewardAdmin.of(r, branches) for r, branches in found.items]
        return Envelope(paginate(request, items, total=found.total, page=page, per_page=params.per_page))

    @get("/{reward_id:str}", opt=reads(auth="admin"))
    async def get_reward(
        self, reward_id: FromPath[str], known_vendor: KnownVendor, reward_reads: RewardReadsDep
    ) -> Envelope[s.RewardAdmin]:
        return Envelope(s.RewardAdmin.of(*await reward_reads.reward(known_vendor, _reward_id(reward_id))))

    @patch("/{reward_id:str}", opt=reads(auth="admin", body=s.RewardPatch, errors=("BRANCH_NOT_FOUND",)))
    async def update_reward(
        self,
        reward_id: FromPath[str],
        payload: NamedDependency[s.RewardPatch],
        known_vendor: KnownVendor,
        reward_writes: RewardWriter,
    ) -> Envelope[s.RewardAdmin]:
        reward, branches = await reward_writes.update(known_vendor, _reward_id(reward_id), present(payload))
        return Envelope(s.RewardAdmin.of(reward, branches))

    @delete("/{reward_id:str}", opt=reads(auth="admin"), status_code=204)
    async def delete_reward(self, vendor_id: FromPath[str], reward_id: FromPath[str], rewards: Rewards) -> None:
        """The admin-portal delete: soft, so the reward's idempotency key stays used (REWARD-2)."""
        await rewards.delete(vendor_id_of(vendor_id), _reward_id(reward_id))
