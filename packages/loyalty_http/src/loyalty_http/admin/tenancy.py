"""Admin API for plans, vendors, clients and branches (contract, section 2)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, delete, patch, post
from litestar.di import NamedDependency
from litestar.params import FromPath
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_http.admin import tenancy_schemas as s
from loyalty_http.params import Config, Limiter, Tenancy, present, vendor_id_of
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope

Db = NamedDependency[AsyncSession]
Clk = NamedDependency[Clock]


class AdminTenancyController(Controller):
    path = "/admin/v1"

    @post("/plans", opt=reads(auth="admin", body=s.PlanCreate))
    async def create_plan(self, payload: NamedDependency[s.PlanCreate], tenancy: Tenancy) -> Envelope[s.Plan]:
        features = payload.features if isinstance(payload.features, s.Features) else s.Features()
        fields = present(payload, leaving=frozenset({"features"}))
        plan = await tenancy.create_plan(
            **fields,
            feature_campaigns=features.campaigns,
            feature_customer_moments=features.customer_moments,
            feature_point_expiry=features.point_expiry,
        )
        return Envelope(s.Plan.from_model(plan))

    @post("/vendors", opt=reads(auth="admin", body=s.VendorCreate))
    async def create_vendor(
        self,
        payload: NamedDependency[s.VendorCreate],
        tenancy: Tenancy,
        config: Config,
        db: NamedDependency[AsyncSession],
        clock: NamedDependency[Clock],
    ) -> Envelope[s.Vendor]:
        vendor = await tenancy.create_vendor(**present(payload))
        if config.passes is not None:
            # asked now, in the creating request, so the shop's first pass never races a queued job
            await config.passes.ask_identity(db, clock, vendor.id)
        return Envelope(s.Vendor.from_model(vendor))

    @patch("/vendors/{vendor_id:str}", opt=reads(auth="admin", body=s.VendorPatch))
    async def patch_vendor(
        self, vendor_id: FromPath[str], payload: NamedDependency[s.VendorPatch], tenancy: Tenancy
    ) -> Envelope[s.Vendor]:
        vendor = await tenancy.patch_vendor(vendor_id_of(vendor_id), present(payload))
        return Envelope(s.Vendor.from_model(vendor))

    @post("/vendors/{vendor_id:str}/clients", opt=reads(auth="admin", body=s.ClientCreate))
    async def create_client(
        self, vendor_id: FromPath[str], payload: NamedDependency[s.ClientCreate], tenancy: Tenancy
    ) -> Envelope[s.ClientCreated]:
        made = await tenancy.create_client(vendor_id_of(vendor_id), **present(payload))
        return Envelope(_created(made))

    @post("/clients", opt=reads(auth="admin", body=s.PlatformClientCreate))
    async def create_vendorless_client(
        self, payload: NamedDependency[s.PlatformClientCreate], tenancy: Tenancy
    ) -> Envelope[s.ClientCreated]:
        made = await tenancy.create_client(None, **present(payload))
        return Envelope(_created(made))

    @patch("/clients/{client_id:str}", opt=reads(auth="admin", body=s.ClientPatch))
    async def patch_client(
        self, client_id: FromPath[str], payload: NamedDependency[s.ClientPatch], tenancy: Tenancy
    ) -> Envelope[s.Client]:
        client, branch = await tenancy.patch_client(client_id, present(payload))
        return Envelope(s.Client.from_model(client, branch))

    @delete("/clients/{client_id:str}", opt=reads(auth="admin"), status_code=204)
    async def revoke_client(self, client_id: FromPath[str], tenancy: Tenancy, limiter: Limiter) -> None:
        client = await tenancy.revoke_client(client_id)
        await limiter.revoke(f"client:{client.client_id}")

    @post(
        "/vendors/{vendor_id:str}/branches",
        opt=reads(auth="admin", body=s.BranchCreate, errors=("BRANCH_EXTERNAL_ID_DUPLICATE",)),
    )
    async def create_branch(
        self, vendor_id: FromPath[str], payload: NamedDependency[s.BranchCreate], tenancy: Tenancy
    ) -> Envelope[s.Branch]:
        branch = await tenancy.create_branch(vendor_id_of(vendor_id), **present(payload))
        return Envelope(s.Branch.from_model(branch))

    @patch(
        "/vendors/{vendor_id:str}/branches/{external_id:str}",
        # NOT_FOUND with details.resource "branch": the branch path names nothing
        opt=reads(auth="admin", body=s.BranchPatch, errors=("NOT_FOUND", "BRANCH_EXTERNAL_ID_DUPLICATE")),
    )
    async def patch_branch(
        self,
        vendor_id: FromPath[str],
        external_id: FromPath[str],
        payload: NamedDependency[s.BranchPatch],
        tenancy: Tenancy,
    ) -> Envelope[s.Branch]:
        branch = await tenancy.patch_branch(vendor_id_of(vendor_id), external_id, present(payload))
        return Envelope(s.Branch.from_model(branch))


def _created(made: Any) -> s.ClientCreated:
    base = s.Client.from_model(made.client, made.default_branch)
    return s.ClientCreated(**{f: getattr(base, f) for f in base.__struct_fields__}, client_secret=made.secret)
