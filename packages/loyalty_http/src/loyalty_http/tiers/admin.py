"""``PUT``, ``GET``, ``DELETE /admin/v1/vendors/{vendor_id}/tiers`` (TIER-5, TIER-7)."""

from __future__ import annotations

from litestar import Controller, delete, get, put
from litestar.di import NamedDependency

from loyalty_core.tenancy.errors import PlanFeatureUnavailable
from loyalty_core.tiers.errors import LadderNotFound
from loyalty_core.tiers.services import TierService
from loyalty_http.params import KnownVendor
from loyalty_http.route_options import reads
from loyalty_http.tiers import schemas as s
from loyalty_http.wire.envelope import Envelope

Tiers = NamedDependency[TierService]


class AdminTiersController(Controller):
    path = "/admin/v1/vendors/{vendor_id:str}/tiers"

    @put("/", opt=reads(auth="admin", body=s.TierLadderPut, errors=(PlanFeatureUnavailable,)))
    async def put_tiers(
        self, payload: NamedDependency[s.TierLadderPut], known_vendor: KnownVendor, tiers: Tiers
    ) -> Envelope[s.Ladder]:
        """The ladder written whole; a tier keeps its ``id`` across a ``PUT`` for the same ``key``."""
        return Envelope(await tiers.put_ladder(known_vendor, payload.data()))

    @get("/", opt=reads(auth="admin", errors=(LadderNotFound,)))
    async def get_tiers(self, known_vendor: KnownVendor, tiers: Tiers) -> Envelope[s.Ladder]:
        """The stored ladder, also while the plan lacks ``tiers``."""
        return Envelope(await tiers.get(known_vendor))

    @delete("/", opt=reads(auth="admin", errors=(LadderNotFound, PlanFeatureUnavailable)), status_code=204)
    async def delete_tiers(self, known_vendor: KnownVendor, tiers: Tiers) -> None:
        """The ladder removed: customers then have no tier."""
        await tiers.delete_ladder(known_vendor)
