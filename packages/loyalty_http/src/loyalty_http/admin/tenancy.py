"""Admin API for plans, vendors, clients and branches (contract, section 2)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, delete, patch, post
from litestar.di import NamedDependency
from litestar.params import FromPath
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.tenancy import errors as te
from loyalty_core.tenancy.services import TenancyService
from loyalty_http.admin import tenancy_schemas as s
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.paths import parse_id

Db = NamedDependency[AsyncSession]
Clk = NamedDependency[Clock]


def vendor_id_of(raw: str) -> int:
    return parse_id(raw, te.VendorNotFound, "No vendor has this id.", vendor_id=raw)


class AdminTenancyController(Controller):
    path = "/admin/v1"

    @post("/plans", opt=reads(auth="admin", body=s.PlanCreate))
    async def create_plan(self, payload: NamedDependency[s.PlanCreate], db: Db, clock: Clk) -> Envelope[s.Plan]:
        features = payload.features if isinstance(payload.features, s.Features) else s.Features()
        fields = {f: getattr(payload, f) for f in payload.__struct_fields__ if f != "features"}
        plan = await TenancyService(db, clock).create_plan(
            **fields,
            feature_campaigns=features.campaigns,
            feature_customer_moments=features.customer_moments,
            feature_point_expiry=features.point_expiry,
        )
        return Envelope(s.Plan.from_model(plan))

    @post("/vendors", opt=reads(auth="admin", body=s.VendorCreate))
    async def create_vendor(self, payload: NamedDependency[s.VendorCreate], db: Db, clock: Clk) -> Envelope[s.Vendor]:
        vendor = await TenancyService(db, clock).create_vendor(**s.present(payload))
        return Envelope(s.Vendor.from_model(vendor))

    @patch("/vendors/{vendor_id:str}", opt=reads(auth="admin", body=s.VendorPatch))
    async def patch_vendor(
        self, vendor_id: FromPath[str], payload: NamedDependency[s.VendorPatch], db: Db, clock: Clk
    ) -> Envelope[s.Vendor]:
        vendor = await TenancyService(db, clock).patch_vendor(vendor_id_of(vendor_id), s.present(payload))
        return Envelope(s.Vendor.from_model(vendor))

    @post("/vendors/{vendor_id:str}/clients", opt=reads(auth="admin", body=s.ClientCreate))
    async def create_client(
        self, vendor_id: FromPath[str], payload: NamedDependency[s.ClientCreate], db: Db, clock: Clk
    ) -> Envelope[s.ClientCreated]:
        made = await TenancyService(db, clock).create_client(vendor_id_of(vendor_id), **s.present(payload))
        return Envelope(_created(made))

    @post("/clients", opt=reads(auth="admin", body=s.PlatformClientCreate))
    async def create_vendorless_client(
        self, payload: NamedDependency[s.PlatformClientCreate], db: Db, clock: Clk
    ) -> Envelope[s.ClientCreated]:
        made = await TenancyService(db, clock).create_client(None, **s.present(payload))
        return Envelope(_created(made))

    @patch("/clients/{client_id:str}", opt=reads(auth="admin", body=s.ClientPatch))
    async def patch_client(
        self, client_id: FromPath[str], payload: NamedDependency[s.ClientPatch], db: Db, clock: Clk
    ) -> Envelope[s.Client]:
        client, branch = await TenancyService(db, clock).patch_client(client_id, s.present(payload))
        return Envelope(s.Client.from_model(client, branch))

    @delete("/clients/{client_id:str}", opt=reads(auth="admin"), status_code=204)
    async def revoke_client(
        self, request: Request[Any, Any, Any], client_id: FromPath[str], db: Db, clock: Clk
    ) -> None:
        client = await TenancyService(db, clock).revoke_client(client_id)
        limiter = request.app.state.loyalty_limiter
        if limiter is not None:
            await limiter.revoke(f"client:{client.client_id}")

    @post("/vendors/{vendor_id:str}/branches", opt=reads(auth="admin", body=s.BranchCreate))
    async def create_branch(
        self, vendor_id: FromPath[str], payload: NamedDependency[s.BranchCreate], db: Db, clock: Clk
    ) -> Envelope[s.Branch]:
        branch = await TenancyService(db, clock).create_branch(vendor_id_of(vendor_id), **s.present(payload))
        return Envelope(s.Branch.from_model(branch))

    @patch("/vendors/{vendor_id:str}/branches/{external_id:str}", opt=reads(auth="admin", body=s.BranchPatch))
    async def patch_branch(
        self,
        vendor_id: FromPath[str],
        external_id: FromPath[str],
        payload: NamedDependency[s.BranchPatch],
        db: Db,
        clock: Clk,
    ) -> Envelope[s.Branch]:
        branch = await TenancyService(db, clock).patch_branch(vendor_id_of(vendor_id), external_id, s.present(payload))
        return Envelope(s.Branch.from_model(branch))


def _created(made: Any) -> s.ClientCreated:
    base = s.Client.from_model(made.client, made.default_branch)
    return s.ClientCreated(**{f: getattr(base, f) for f in base.__struct_fields__}, client_secret=made.secret)
