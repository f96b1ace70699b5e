"""Admin API: a vendor's points liability report, month by month (LIABILITY-1 to LIABILITY-7)."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import Controller, get
from litestar.di import NamedDependency
from msgspec import UNSET, UnsetType

from loyalty_core.wallet.liability import COLUMNS, LiabilityReport, report_range, vendor_liability
from loyalty_http.params import Clk, Db, KnownVendor, Tenancy, given
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope

MonthText = Annotated[str, msgspec.Meta(max_length=7, examples=["2026-11"])]


class LiabilityQuery(msgspec.Struct):
    from_: MonthText | UnsetType = msgspec.field(default=UNSET, name="from")
    """The first month, ``YYYY-MM``; 11 months before ``to`` by default."""
    to: MonthText | UnsetType = UNSET
    """The last month, ``YYYY-MM``; the current UTC month by default, and not later."""


class LiabilityMonth(msgspec.Struct):
    month: str
    opening: int
    earn: int
    redeem: int
    expire: int
    adjust: int
    return_: int = msgspec.field(name="return")
    referral: int
    closing: int
    pending_closing: int
    opening_cents: int
    earn_cents: int
    redeem_cents: int
    expire_cents: int
    adjust_cents: int
    return_cents: int
    referral_cents: int
    closing_cents: int
    pending_closing_cents: int


class Liability(msgspec.Struct):
    point_value_millicents: int
    months: list[LiabilityMonth]
    breakage_percent: float | None

    @classmethod
    def of(cls, report: LiabilityReport) -> Liability:
        months = []
        for row in report.months:
            figures = {column: row.figure(column) for column in COLUMNS}
            cents = {f"{column}_cents": report.cents(points) for column, points in figures.items()}
            months.append(msgspec.convert({"month": row.month.strftime("%Y-%m"), **figures, **cents}, LiabilityMonth))
        shown = None if report.breakage_percent is None else float(report.breakage_percent)
        return cls(report.point_value_millicents, months, shown)


class AdminLiabilityController(Controller):
    path = "/admin/v1/vendors/{vendor_id:str}"

    @get("/liability", opt=reads(auth="admin", query=LiabilityQuery))
    async def get_liability_report(
        self,
        params: NamedDependency[LiabilityQuery],
        known_vendor: KnownVendor,
        tenancy: Tenancy,
        db: Db,
        clock: Clk,
    ) -> Envelope[Liability]:
        """What the shop owes its customers in points, month by month: every movement counted in the
        UTC month it took effect, an expiry at the instant its lot ended."""
        now = clock.now()
        first, last = report_range(given(params.from_), given(params.to), now)
        vendor = await tenancy.get_vendor(known_vendor)
        return Envelope(Liability.of(await vendor_liability(db, vendor, first, last, now)))
