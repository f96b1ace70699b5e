"""Voucher endpoints: the portal's create, the till's read and verify (VOUCHER-1 to VOUCHER-3)."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from loyalty_core.errors import ValidationFailed
from loyalty_core.tenancy.rules.access import VendorContext
from loyalty_http.params import Clk, KnownVendor, VoucherListDep, Vouchers, given
from loyalty_http.route_options import reads
from loyalty_http.vouchers import schemas as s
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.pagination import DEFAULT_PER_PAGE, Page, PerPage, page_number, paginate


class VoucherQuery(msgspec.Struct):
    customer_id: Annotated[int, msgspec.Meta(ge=1, le=2**63 - 1)] | msgspec.UnsetType = msgspec.UNSET
    per_page: PerPage = DEFAULT_PER_PAGE


class AdminVouchersController(Controller):
    path = "/admin/v1/vendors/{vendor_id:str}/vouchers"

    @get("/", opt=reads(auth="admin", query=VoucherQuery))
    async def list_vouchers(
        self,
        request: Request[Any, Any, Any],
        params: NamedDependency[VoucherQuery],
        known_vendor: KnownVendor,
        voucher_list: VoucherListDep,
        clock: Clk,
    ) -> Envelope[Page[s.VoucherBody]]:
        """Newest first, optionally one customer's."""
        page = page_number(request)
        found = await voucher_list.vouchers(
            known_vendor, customer_id=given(params.customer_id), page=page, per_page=params.per_page
        )
        today = clock.now().date()
        items = [s.VoucherBody.of(v, branches, today) for v, branches in found.items]
        return Envelope(paginate(request, items, total=found.total, page=page, per_page=params.per_page))

    @post(
        "/",
        opt=reads(auth="admin", body=s.VoucherCreate, errors=("CUSTOMER_NOT_FOUND", "BRANCH_NOT_FOUND")),
        status_code=201,
    )
    async def create_voucher(
        self, payload: NamedDependency[s.VoucherCreate], known_vendor: KnownVendor, vouchers: Vouchers, clock: Clk
    ) -> Envelope[s.VoucherBody]:
        if payload.discount_type == "percentage" and payload.discount_value > 100:
            raise ValidationFailed(
                "A percentage is at most 100.", {"discount_value": ["A percentage is a whole number from 1 to 100."]}
            )
        voucher, branches = await vouchers.create(
            known_vendor,
            customer_id=payload.customer_id,
            description=given(payload.description),
            valid_until=given(payload.valid_until),
            branches=given(payload.branches),
            discount_type=payload.discount_type,
            discount_value=payload.discount_value,
        )
        return Envelope(s.VoucherBody.of(voucher, branches, clock.now().date()))


class VoucherController(Controller):
    path = "/api/v1/vouchers"

    @get("/{code:str}", opt=reads(errors=("VOUCHER_NOT_FOUND",)))
    async def read(
        self, code: FromPath[str], vendor: NamedDependency[VendorContext], vouchers: Vouchers, clock: Clk
    ) -> Envelope[s.VoucherBody]:
        voucher, branches = await vouchers.get(vendor.vendor_id, code)
        return Envelope(s.VoucherBody.of(voucher, branches, clock.now().date()))

    @post(
        "/{code:str}/verify",
        opt=reads(
            body=s.VoucherVerify,
            errors=(
                "BRANCH_NOT_FOUND",
                "BRANCH_INACTIVE",
                "BRANCH_REQUIRED",
                "VOUCHER_EXPIRED",
                "VOUCHER_ALREADY_USED",
            ),
        ),
        status_code=200,
    )
    async def verify(
        self,
        code: FromPath[str],
        payload: NamedDependency[s.VoucherVerify],
        vendor: NamedDependency[VendorContext],
        vouchers: Vouchers,
        clock: Clk,
    ) -> Envelope[s.VoucherBody]:
        voucher, branches = await vouchers.verify(
            vendor.vendor_id, code, branch_key=given(payload.branch), default_branch=vendor.default_branch
        )
        return Envelope(s.VoucherBody.of(voucher, branches, clock.now().date()))
