"""Reports (owners only, LIABILITY-9): the points liability report, month by month (LIABILITY-1 to
LIABILITY-7), as a table, a chart drawn on the server and a CSV download with the same figures."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get

from loyalty_core.error_status import status_of
from loyalty_core.errors import DomainError
from loyalty_core.wallet.liability import COLUMNS, LiabilityReport, shop_liability
from loyalty_portal import exports
from loyalty_portal.access import OWNER_ONLY, Cfg, Db, Me
from loyalty_portal.liability_chart import chart_of
from loyalty_portal.web import render

AnyRequest = Request[Any, Any, Any]
CURRENT = "Reports"
LABELS = {
    "opening": "Opening",
    "earn": "Earned",
    "redeem": "Redeemed",
    "expire": "Expired",
    "adjust": "Adjusted",
    "return": "Returned",
    "referral": "Referrals",
    "closing": "Closing",
    "pending_closing": "Pending",
}
"""Each column's heading on the page (the CSV's header row keeps the API's field names)."""
CSV_HEADER = ("month", *COLUMNS, *(f"{c}_cents" for c in COLUMNS))


def euros(cents: int) -> str:
    """Cents as euros with two decimals, the sign first: ``-1.05``."""
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def csv_rows(report: LiabilityReport) -> list[list[Any]]:
    return [
        [
            f"{row.month:%Y-%m}",
            *(row.figure(c) for c in COLUMNS),
            *(report.cents(row.figure(c)) for c in COLUMNS),
        ]
        for row in report.months
    ]


def _range_of(request: AnyRequest) -> tuple[str | None, str | None]:
    """``from`` and ``to`` as typed; an empty field is left out."""
    first, last = request.query_params.get("from"), request.query_params.get("to")
    return (first.strip() or None) if first else None, (last.strip() or None) if last else None


class ReportsController(Controller):
    path = "/reports"
    opt = OWNER_ONLY

    @get("/")
    async def show(self, request: AnyRequest, visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        first, last = _range_of(request)
        return await self._page(visitor, db, config, first, last)

    @get("/liability.csv")
    async def download(self, request: AnyRequest, visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        first, last = _range_of(request)
        return await self._csv(visitor, db, config, first, last)

    async def _page(self, visitor: Me, db: Db, config: Cfg, first: str | None, last: str | None) -> Response[Any]:
        try:
            report = await shop_liability(db, visitor.vendor_id, first, last, config.clock.now())
        except DomainError as refused:
            return render(
                "reports.html",
                status=status_of(refused),
                visitor=visitor,
                current=CURRENT,
                error=refused.message,
                problems=getattr(refused, "fields", {}),
                first=first or "",
                last=last or "",
            )
        rows = [
            {
                "month": f"{row.month:%Y-%m}",
                "points": [row.figure(c) for c in COLUMNS],
                "euros": [euros(report.cents(row.figure(c))) for c in COLUMNS],
            }
            for row in report.months
        ]
        return render(
            "reports.html",
            visitor=visitor,
            current=CURRENT,
            report=report,
            labels=[LABELS[c] for c in COLUMNS],
            rows=rows,
            chart=chart_of(report),
            first=f"{report.months[0].month:%Y-%m}",
            last=f"{report.months[-1].month:%Y-%m}",
        )

    async def _csv(self, visitor: Me, db: Db, config: Cfg, first: str | None, last: str | None) -> Response[Any]:
        try:
            report = await shop_liability(db, visitor.vendor_id, first, last, config.clock.now())
        except DomainError as refused:
            return Response(refused.message, status_code=status_of(refused), media_type="text/plain")
        return Response(
            exports.lines([CSV_HEADER, *csv_rows(report)]),
            media_type="text/csv",
            headers={"Content-Disposition": 'attachment; filename="liability.csv"'},
        )
