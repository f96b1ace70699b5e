"""``GET /api/v1/tiers`` (TIER-7): the vendor's ladder, NOT_FOUND without one or while its plan lacks ``tiers``."""

from __future__ import annotations

from litestar import Controller, get
from litestar.di import NamedDependency

from loyalty_core.tiers.errors import LadderNotFound
from loyalty_core.tiers.services import TierService
from loyalty_http.params import Vendor
from loyalty_http.route_options import reads
from loyalty_http.tiers import schemas as s
from loyalty_http.wire.envelope import Envelope


class TierController(Controller):
    path = "/api/v1/tiers"

    @get("/", opt=reads(errors=(LadderNotFound,)))
    async def get_tiers(self, vendor: Vendor, tiers: NamedDependency[TierService]) -> Envelope[s.Ladder]:
        """The shop's tiers: what qualifies, over how many months, and each tier's threshold and bonus."""
        return Envelope(await tiers.get(vendor.vendor_id, paying=True))
