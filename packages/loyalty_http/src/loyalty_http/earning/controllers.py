"""The till's purchase endpoints and their preview (EARN-6, EARN-11), a customer's purchases, and the
till's returns with the read of one purchase: POST/GET /transactions/{transaction_id}/returns and
GET /transactions/{transaction_id}. A return's POST is a till call like the purchase: called
directly, on the request's one pooled connection, through the prepared statements of
``loyalty_core.earning.till_return``."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from loyalty_core.customers.errors import CustomerDeactivated
from loyalty_core.earning.errors import PlanLimitExceeded, TransactionNotFound
from loyalty_core.earning.till_purchase import Purchases
from loyalty_core.earning.till_purchase_reads import customer_transactions, transaction_shown
from loyalty_core.earning.till_return import till_return
from loyalty_core.earning.till_return_reads import transaction_returns
from loyalty_core.errors import IdempotencyKeyConflict
from loyalty_core.tenancy.errors import BranchInactive, BranchNotFound
from loyalty_core.tenancy.rules.access import VendorContext
from loyalty_http.earning import purchase_schemas as s
from loyalty_http.earning import return_schemas
from loyalty_http.params import Clk, Config, Reader, Writer, customer_id_of, wake_deliveries
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.pagination import Page, offset_of, page_number, paginate
from loyalty_http.wire.paths import parse_id
from loyalty_http.wire.validation import parse_datetime_or_date

Caller = NamedDependency[VendorContext]
Scorer = NamedDependency[Purchases]

_SCORING_ERRORS = ("CUSTOMER_NOT_FOUND", CustomerDeactivated, BranchNotFound, BranchInactive)


class TransactionController(Controller):
    path = "/api/v1/transactions"

    @post(
        "/",
        opt=reads(
            body=s.TransactionBody,
            errors=(*_SCORING_ERRORS, IdempotencyKeyConflict, PlanLimitExceeded),
            success=(200,),
        ),
        status_code=201,
    )
    async def submit(
        self,
        payload: NamedDependency[s.TransactionBody],
        vendor: Caller,
        purchases: Scorer,
        writer: Writer,
        clock: Clk,
        config: Config,
    ) -> Response[Envelope[s.Transaction]]:
        """A new purchase answers 201, its replay 200 with the original (EARN-6)."""
        done = await purchases.submit(writer, vendor, payload.request(), key=payload.idempotency_key, now=clock.now())
        await wake_deliveries(config, done.deliveries)
        return Response(Envelope(s.Transaction.of(done.transaction)), status_code=201 if done.created else 200)

    @post("/preview", opt=reads(body=s.PreviewBody, errors=_SCORING_ERRORS), status_code=200)
    async def preview(
        self, payload: NamedDependency[s.PreviewBody], vendor: Caller, purchases: Scorer, reader: Reader, clock: Clk
    ) -> Envelope[s.PreviewResult]:
        """What the purchase would earn now; nothing is written or counted."""
        seen = await purchases.preview(reader, vendor, payload.request(), now=clock.now())
        entries = msgspec.convert(seen.scoring.entries(), list[s.RuleApplied])
        return Envelope(s.PreviewResult(seen.customer_id, seen.scoring.points_earned, entries))


class CustomerTransactionsController(Controller):
    path = "/api/v1/customers/{customer:str}"

    @get("/transactions", opt=reads(query=s.TransactionsQuery, errors=("CUSTOMER_NOT_FOUND",)))
    async def list_transactions(
        self,
        request: Request[Any, Any, Any],
        customer: FromPath[str],
        params: NamedDependency[s.TransactionsQuery],
        vendor: Caller,
        reader: Reader,
    ) -> Envelope[Page[s.Transaction]]:
        page = page_number(request)
        views, total = await customer_transactions(
            reader,
            vendor.vendor_id,
            customer_id_of(customer),
            date_from=parse_datetime_or_date(params.date_from) if isinstance(params.date_from, str) else None,
            date_to=parse_datetime_or_date(params.date_to) if isinstance(params.date_to, str) else None,
            offset=offset_of(page, params.per_page),
            limit=params.per_page,
        )
        items = [s.Transaction.of(view) for view in views]
        return Envelope(paginate(request, items, total=total, page=page, per_page=params.per_page))


def transaction_id_of(raw: str) -> int:
    """A transaction id in a path; one that is no whole number is a purchase the vendor does not have."""
    return parse_id(raw, TransactionNotFound, "No transaction of the vendor has this id.", transaction_id=raw)


class ReturnController(Controller):
    path = "/api/v1/transactions/{transaction_id:str}"

    @get("/", opt=reads(errors=(TransactionNotFound,)))
    async def read(self, transaction_id: FromPath[str], vendor: Caller, reader: Reader) -> Envelope[s.Transaction]:
        """One purchase with its returned totals so far."""
        view = await transaction_shown(reader, vendor.vendor_id, transaction_id_of(transaction_id))
        if view is None:
            raise TransactionNotFound("No transaction of the vendor has this id.", transaction_id=transaction_id)
        return Envelope(s.Transaction.of(view))

    @post(
        "/returns",
        opt=reads(
            body=return_schemas.ReturnBody,
            errors=(TransactionNotFound, BranchNotFound, BranchInactive, IdempotencyKeyConflict),
            success=(200,),
        ),
        status_code=201,
    )
    async def submit(
        self,
        transaction_id: FromPath[str],
        payload: NamedDependency[return_schemas.ReturnBody],
        vendor: Caller,
        writer: Writer,
        clock: Clk,
        config: Config,
    ) -> Response[Envelope[return_schemas.Return]]:
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
        return Response(Envelope(return_schemas.Return.of(done.view)), status_code=201 if done.created else 200)

    @get("/returns", opt=reads(query=return_schemas.ReturnsQuery, errors=(TransactionNotFound,)))
    async def list_returns(
        self,
        request: Request[Any, Any, Any],
        transaction_id: FromPath[str],
        params: NamedDependency[return_schemas.ReturnsQuery],
        vendor: Caller,
        reader: Reader,
    ) -> Envelope[Page[return_schemas.Return]]:
        """The purchase's returns, oldest first."""
        page = page_number(request)
        views, total = await transaction_returns(
            reader,
            vendor.vendor_id,
            transaction_id_of(transaction_id),
            offset=offset_of(page, params.per_page),
            limit=params.per_page,
        )
        items = [return_schemas.Return.of(view) for view in views]
        return Envelope(paginate(request, items, total=total, page=page, per_page=params.per_page))
