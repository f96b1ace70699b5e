"""``PUT``, ``GET /admin/v1/vendors/{vendor_id}/referral-programme`` (REFERRAL-2, REFERRAL-3, REFERRAL-4)."""

from __future__ import annotations

from litestar import Controller, get, put
from litestar.di import NamedDependency

from loyalty_core.referrals.errors import ProgrammeNotFound
from loyalty_core.referrals.services import ProgrammeService
from loyalty_core.tenancy.errors import PlanFeatureUnavailable
from loyalty_http.params import KnownVendor
from loyalty_http.referrals import schemas as s
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope

Programmes = NamedDependency[ProgrammeService]


class AdminReferralProgrammeController(Controller):
    path = "/admin/v1/vendors/{vendor_id:str}/referral-programme"

    @put("/", opt=reads(auth="admin", body=s.ProgrammePut, errors=(PlanFeatureUnavailable,)))
    async def put_referral_programme(
        self, payload: NamedDependency[s.ProgrammePut], known_vendor: KnownVendor, referral_programmes: Programmes
    ) -> Envelope[s.Programme]:
        """The programme written whole; needs the plan's ``referrals`` feature."""
        return Envelope(await referral_programmes.put_programme(known_vendor, payload.data()))

    @get("/", opt=reads(auth="admin", errors=(ProgrammeNotFound,)))
    async def get_referral_programme(
        self, known_vendor: KnownVendor, referral_programmes: Programmes
    ) -> Envelope[s.Programme]:
        """The stored programme, also while the plan lacks ``referrals``."""
        return Envelope(await referral_programmes.get(known_vendor))
