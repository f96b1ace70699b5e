"""Voucher endpoints: the portal's create, the till's read and verify (back-office contract 2)."""

from __future__ import annotations

from litestar import Controller, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from loyalty_core.clock import Clock
from loyalty_core.errors import ValidationFailed
from loyalty_core.tenancy.access import VendorContext
from loyalty_http.params import KnownVendor, Vouchers, given
from loyalty_http.route_options import reads
from loyalty_http.vouchers import schemas as s
from loyalty_http.wire.envelope import Envelope

Clk = NamedDependency[Clock]


class AdminVouchersController(Controller):
    path = "/admin/v1/vendors/{vendor_id:str}/vouchers"

    @post("/", opt=reads(auth="admin", body=s.VoucherCreate, errors=("CUSTOMER_NOT_FOUND",)), status_code=201)
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

    @post("/{code:str}/verify", opt=reads(body=s.VoucherVerify), status_code=200)
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
