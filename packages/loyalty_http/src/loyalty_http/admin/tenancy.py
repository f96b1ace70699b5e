"""Admin API for plans, vendors, clients and branches: their writes and reads, and a vendor's usage of
its plan. A client is shown without its secret (only a hash of it is kept)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, delete, get, patch, post
from litestar.di import NamedDependency
from litestar.params import FromPath
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.tenancy.errors import PlanNotFound
from loyalty_core.tenancy.services import NewClient
from loyalty_core.usage import Usage
from loyalty_http.admin import tenancy_schemas as s
from loyalty_http.params import (
    Config,
    KnownVendor,
    Limiter,
    Tenancy,
    TenancyReadsDep,
    UsageDep,
    given,
    present,
    vendor_id_of,
)
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.pagination import Page, page_number, paginate
from loyalty_http.wire.paths import parse_id

AnyRequest = Request[Any, Any, Any]


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
            feature_tiers=features.tiers,
            feature_referrals=features.referrals,
            feature_campaign_mail=features.campaign_mail,
        )
        return Envelope(s.Plan.of(plan))

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
        return Envelope(s.Vendor.of(vendor))

    @patch("/vendors/{vendor_id:str}", opt=reads(auth="admin", body=s.VendorPatch))
    async def patch_vendor(
        self, vendor_id: FromPath[str], payload: NamedDependency[s.VendorPatch], tenancy: Tenancy
    ) -> Envelope[s.Vendor]:
        vendor = await tenancy.patch_vendor(vendor_id_of(vendor_id), present(payload))
        return Envelope(s.Vendor.of(vendor))

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
        return Envelope(s.Client.of(client, branch.external_id if branch else None))

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
        return Envelope(s.Branch.of(branch))

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
        return Envelope(s.Branch.of(branch))

    @get("/plans", opt=reads(auth="admin", query=s.PageQuery))
    async def list_plans(
        self, request: AnyRequest, params: NamedDependency[s.PageQuery], tenancy_reads: TenancyReadsDep
    ) -> Envelope[Page[s.Plan]]:
        page = page_number(request)
        found = await tenancy_reads.plans(page=page, per_page=params.per_page)
        items = [s.Plan.of(p) for p in found.items]
        return Envelope(paginate(request, items, total=found.total, page=page, per_page=params.per_page))

    @get("/plans/{plan_id:str}", opt=reads(auth="admin"))
    async def get_plan(self, plan_id: FromPath[str], tenancy: Tenancy) -> Envelope[s.Plan]:
        return Envelope(s.Plan.of(await tenancy.get_plan(_plan_id(plan_id))))

    @patch("/plans/{plan_id:str}", opt=reads(auth="admin", body=s.PlanPatch))
    async def patch_plan(
        self, plan_id: FromPath[str], payload: NamedDependency[s.PlanPatch], tenancy: Tenancy
    ) -> Envelope[s.Plan]:
        """Every vendor on the plan gets the change with its next request."""
        return Envelope(s.Plan.of(await tenancy.patch_plan(_plan_id(plan_id), payload.changes())))

    @get("/vendors", opt=reads(auth="admin", query=s.VendorQuery))
    async def list_vendors(
        self, request: AnyRequest, params: NamedDependency[s.VendorQuery], tenancy_reads: TenancyReadsDep
    ) -> Envelope[Page[s.Vendor]]:
        page = page_number(request)
        found = await tenancy_reads.vendors(
            status=given(params.status), q=given(params.q), page=page, per_page=params.per_page
        )
        items = [s.Vendor.of(v) for v in found.items]
        return Envelope(paginate(request, items, total=found.total, page=page, per_page=params.per_page))

    @get("/vendors/{vendor_id:str}", opt=reads(auth="admin"))
    async def get_vendor(self, known_vendor: KnownVendor, tenancy: Tenancy) -> Envelope[s.Vendor]:
        return Envelope(s.Vendor.of(await tenancy.get_vendor(known_vendor)))

    @get("/vendors/{vendor_id:str}/usage", opt=reads(auth="admin"))
    async def get_usage(self, known_vendor: KnownVendor, usage: UsageDep) -> Envelope[Usage]:
        """This UTC month's use of each of the plan's limits: what no public endpoint reports."""
        return Envelope(await usage.usage(known_vendor))

    @get("/vendors/{vendor_id:str}/clients", opt=reads(auth="admin", query=s.PageQuery))
    async def list_clients(
        self,
        request: AnyRequest,
        params: NamedDependency[s.PageQuery],
        known_vendor: KnownVendor,
        tenancy_reads: TenancyReadsDep,
    ) -> Envelope[Page[s.Client]]:
        page = page_number(request)
        found = await tenancy_reads.clients(known_vendor, page=page, per_page=params.per_page)
        items = [s.Client.of(c.client, c.default_branch) for c in found.items]
        return Envelope(paginate(request, items, total=found.total, page=page, per_page=params.per_page))

    @get("/clients/{client_id:str}", opt=reads(auth="admin"))
    async def get_client(self, client_id: FromPath[str], tenancy_reads: TenancyReadsDep) -> Envelope[s.Client]:
        found = await tenancy_reads.client(client_id)
        return Envelope(s.Client.of(found.client, found.default_branch))

    @get("/vendors/{vendor_id:str}/branches", opt=reads(auth="admin", query=s.PageQuery))
    async def list_branches(
        self,
        request: AnyRequest,
        params: NamedDependency[s.PageQuery],
        known_vendor: KnownVendor,
        tenancy_reads: TenancyReadsDep,
    ) -> Envelope[Page[s.Branch]]:
        page = page_number(request)
        found = await tenancy_reads.branches(known_vendor, page=page, per_page=params.per_page)
        items = [s.Branch.of(b) for b in found.items]
        return Envelope(paginate(request, items, total=found.total, page=page, per_page=params.per_page))

    @get("/vendors/{vendor_id:str}/branches/{external_id:str}", opt=reads(auth="admin"))
    async def get_branch(
        self, external_id: FromPath[str], known_vendor: KnownVendor, tenancy_reads: TenancyReadsDep
    ) -> Envelope[s.Branch]:
        return Envelope(s.Branch.of(await tenancy_reads.branch(known_vendor, external_id)))


def _plan_id(raw: str) -> int:
    return parse_id(raw, PlanNotFound, "No plan has this id.", plan_id=raw)


def _created(made: NewClient) -> s.ClientCreated:
    branch = made.default_branch
    base = s.Client.of(made.client, branch.external_id if branch is not None else None)
    return s.ClientCreated(**{f: getattr(base, f) for f in base.__struct_fields__}, client_secret=made.secret)
