"""Export (owners only): the shop's customers, and its ledger over a range of days, as CSV files
streamed while they are read (see ``loyalty_portal.exports``)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get
from litestar.response import Stream

from loyalty_core.accounts.reads import CUSTOMER_COLUMNS, customer_rows
from loyalty_core.errors import ValidationFailed
from loyalty_core.wallet.reads import LEDGER_COLUMNS, ledger_rows
from loyalty_portal import exports
from loyalty_portal.access import OWNER_ONLY, Cfg, Me
from loyalty_portal.forms import Form
from loyalty_portal.web import render

CURRENT = "Export"


def download(name: str, body: Any) -> Stream:
    return Stream(
        body,
        media_type="text/csv",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


class ExportController(Controller):
    path = "/export"
    opt = OWNER_ONLY

    @get("/")
    async def choose(self, visitor: Me) -> Response[Any]:
        return render("export.html", visitor=visitor, current=CURRENT, values={})

    @get("/customers.csv")
    async def customers(self, visitor: Me, config: Cfg) -> Stream:
        rows = customer_rows(config.sessionmaker, visitor.vendor_id)
        return download("customers.csv", exports.stream_csv(CUSTOMER_COLUMNS, rows))

    @get("/ledger.csv")
    async def ledger(self, request: Request[Any, Any, Any], visitor: Me, config: Cfg) -> Response[Any] | Stream:
        form = Form({k: v for k, v in request.query_params.items() if k in ("date_from", "date_to")})
        first, last = form.day("date_from"), form.day("date_to")
        if first is not None and last is not None and last < first:
            form.problems.setdefault("date_to", []).append("The last day comes on or after the first.")
        try:
            form.check()
        except ValidationFailed as refused:
            return render(
                "export.html",
                status=422,
                visitor=visitor,
                current=CURRENT,
                values=form.raw,
                problems=refused.fields,
                error=refused.message,
            )
        rows = ledger_rows(config.sessionmaker, visitor.vendor_id, first, last)
        return download("ledger.csv", exports.stream_csv(LEDGER_COLUMNS, rows))
