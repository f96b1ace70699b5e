"""A test-only controller that exercises the HTTP conventions before any real endpoint exists."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Annotated, Any, Literal

import msgspec
from litestar import Controller, Request, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath
from msgspec import UNSET, UnsetType
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.errors import NotFound
from loyalty_core.tenancy.rules.access import VendorContext
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.pagination import DEFAULT_PER_PAGE, Page, PerPage, page_number, paginate


class Identifier(msgspec.Struct):
    type: Literal["email", "loyalty_card"]
    value: Annotated[str, msgspec.Meta(max_length=255)]


class ProbeBody(msgspec.Struct, omit_defaults=True):
    name: Annotated[str, msgspec.Meta(max_length=20)]
    email: Annotated[str, msgspec.Meta(extra={"rule": "email"})] | UnsetType | None = UNSET
    amount: int | UnsetType = UNSET
    quantity: Annotated[int, msgspec.Meta(ge=1)] | UnsetType = UNSET
    active: bool | UnsetType = UNSET
    born_on: date | UnsetType | None = UNSET
    identifiers: list[Identifier] | UnsetType = UNSET
    metadata: dict[str, Any] | UnsetType | None = UNSET
    note: str | UnsetType | None = UNSET
    image_url: Annotated[str, msgspec.Meta(extra={"rule": "url"})] | UnsetType | None = UNSET

    def check(self) -> Mapping[str, list[str]]:
        if self.amount == 0:
            return {"amount": ["The amount must not be zero."]}
        return {}


class ProbeQuery(msgspec.Struct):
    search: Annotated[str, msgspec.Meta(max_length=50)] | UnsetType = UNSET
    per_page: PerPage = DEFAULT_PER_PAGE
    total: Annotated[int, msgspec.Meta(ge=0, le=1000)] = 0


class Item(msgspec.Struct):
    n: int


class ProbeMissing(NotFound):
    code = "CUSTOMER_NOT_FOUND"


class ProbeController(Controller):
    path = "/api/v1/probe"

    @post("/echo", opt=reads(auth="admin", body=ProbeBody), status_code=200)
    async def echo(self, payload: NamedDependency[ProbeBody]) -> Envelope[ProbeBody]:
        return Envelope(payload)

    @get("/items", opt=reads(auth="admin", query=ProbeQuery))
    async def items(self, request: Request[Any, Any, Any], params: NamedDependency[ProbeQuery]) -> Envelope[Page[Item]]:
        page = page_number(request)
        start = (page - 1) * params.per_page
        items = [Item(n) for n in range(start + 1, min(start + params.per_page, params.total) + 1)]
        return Envelope(paginate(request, items, total=params.total, page=page, per_page=params.per_page))

    @get("/boom", opt=reads(auth="admin"))
    async def boom(self) -> None:
        raise RuntimeError("password=hunter2 at db-internal-host")

    @get("/db-boom", opt=reads(auth="admin"))
    async def db_boom(self, db: NamedDependency[AsyncSession]) -> None:
        # PostgreSQL quotes the value it could not read; SQLAlchemy would add the bind parameters
        await db.execute(text("SELECT CAST(:email AS integer)"), {"email": "jane.doe@example.com"})

    @get("/sqlstate/{code:str}", opt=reads(auth="admin"))
    async def sqlstate(self, code: FromPath[str], db: NamedDependency[AsyncSession]) -> None:
        """Fails the way PostgreSQL would with ``code`` (a deadlock, a serialization failure, ...)."""
        if not code.isalnum() or len(code) != 5:
            raise ProbeMissing("Not a SQLSTATE.")
        await db.execute(text(f"DO $$ BEGIN RAISE EXCEPTION 'induced' USING ERRCODE = '{code}'; END $$"))

    @get("/missing", opt=reads(auth="admin"))
    async def missing(self) -> None:
        raise ProbeMissing("No customer with this identifier.", identifier="X")

    @get("/vendor", opt=reads(auth="vendor"))
    async def vendor_read(self, vendor: NamedDependency[VendorContext]) -> Envelope[dict[str, Any]]:
        branch = vendor.default_branch.external_id if vendor.default_branch else None
        return Envelope({"vendor_id": vendor.vendor_id, "client_id": vendor.client_id, "default_branch": branch})

    @post("/vendor", opt=reads(auth="vendor", body=ProbeBody), status_code=201)
    async def vendor_write(
        self, vendor: NamedDependency[VendorContext], payload: NamedDependency[ProbeBody]
    ) -> Envelope[dict[str, Any]]:
        return Envelope({"vendor_id": vendor.vendor_id, "name": payload.name})

    @get("/things/{thing_id:str}", opt=reads(auth="admin"))
    async def thing(self, thing_id: FromPath[str]) -> Envelope[dict[str, str]]:
        return Envelope({"thing_id": thing_id})


def probe_jobs() -> dict[str, Any]:
    async def probe() -> Mapping[str, Any]:
        return {"ran": True}

    return {"probe": probe}
