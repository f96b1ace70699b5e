"""The till's returns and the read of one purchase: POST/GET /transactions/{transaction_id}/returns
and GET /transactions/{transaction_id}. The POST is a till call like the purchase: called directly,
on the request's one pooled connection, through the prepared statements of
``loyalty_core.earning.till_return``."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from loyalty_core.earning.errors import TransactionNotFound
from loyalty_core.earning.till_purchase_reads import transaction_shown
from loyalty_core.earning.till_return import till_return
from loyalty_core.earning.till_return_reads import transaction_returns
from loyalty_core.errors import IdempotencyKeyConflict
from loyalty_core.tenancy.errors import BranchInactive, BranchNotFound
from loyalty_core.tenancy.rules.access import VendorContext
from loyalty_http.earning import purchase_schemas
from loyalty_http.earning import return_schemas as s
from loyalty_http.params import Clk, Config, Reader, Writer, wake_deliveries
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.pagination import Page, offset_of, page_number, paginate
from loyalty_http.wire.paths import parse_id

Caller = NamedDependency[VendorContext]


def transaction_id_of(raw: str) -> int:
    """A transaction id in a path; one that is no whole number is a purchase the vendor does not have."""
    return parse_id(raw, TransactionNotFound, "No transaction of the vendor has this id.", transaction_id=raw)


class ReturnController(Controller):
    path = "/api/v1/transactions/{transaction_id:str}"

    @get("/", opt=reads(errors=(TransactionNotFound,)))
    async def read(
        self, transaction_id: FromPath[str], vendor: Caller, reader: Reader
    ) -> Envelope[purchase_schemas.Transaction]:
        """One purchase with its returned totals so far."""
        view = await transaction_shown(reader, vendor.vendor_id, transaction_id_of(transaction_id))
        if view is None:
            raise TransactionNotFound("No transaction of the vendor has this id.", transaction_id=transaction_id)
        return Envelope(purchase_schemas.Transaction.of(view))

    @post(
        "/returns",
        opt=reads(
            body=s.ReturnBody,
            errors=(TransactionNotFound, BranchNotFound, BranchInactive, IdempotencyKeyConflict),
            success=(200,),
        ),
        status_code=201,
    )
    async def submit(
        self,
        transaction_id: FromPath[str],
        payload: NamedDependency[s.ReturnBody],
        vendor: Caller,
        writer: Writer,
        clock: Clk,
        config: Config,
    ) -> Response[Envelope[s.Return]]:
        """A new return answers 201, its replay 200 with the original body."""
        done = await till_return(
            writer,
            vendor,
            transaction_id_of(transaction_id),
            payload.request(),
            key=payload.idempotency_key,
            now=clock.now(),
        )
        await wake_deliveries(config, done.deliveries)
        return Response(Envelope(s.Return.of(done.view)), status_code=201 if done.created else 200)

    @get("/returns", opt=reads(query=s.ReturnsQuery, errors=(TransactionNotFound,)))
    async def list_returns(
        self,
        request: Request[Any, Any, Any],
        transaction_id: FromPath[str],
        params: NamedDependency[s.ReturnsQuery],
        vendor: Caller,
        reader: Reader,
    ) -> Envelope[Page[s.Return]]:
        """The purchase's returns, oldest first."""
        page = page_number(request)
        views, total = await transaction_returns(
            reader,
            vendor.vendor_id,
            transaction_id_of(transaction_id),
            offset=offset_of(page, params.per_page),
            limit=params.per_page,
        )
        items = [s.Return.of(view) for view in views]
        return Envelope(paginate(request, items, total=total, page=page, per_page=params.per_page))
