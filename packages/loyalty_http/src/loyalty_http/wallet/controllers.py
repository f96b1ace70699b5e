"""Wallet and ledger endpoints."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from loyalty_core.tenancy.access import VendorContext
from loyalty_core.wallet.models import Causer, CauserType
from loyalty_core.wallet.services import LedgerFilter
from loyalty_core.wallet.till_adjust import Adjustment, till_adjust
from loyalty_http.params import Clk, Config, Wallets, Writer, customer_id_of, wake_deliveries
from loyalty_http.route_options import reads
from loyalty_http.wallet import schemas as s
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.pagination import Page, offset_of, page_number, paginate
from loyalty_http.wire.validation import parse_datetime_or_date

Vendor = NamedDependency[VendorContext]


class WalletController(Controller):
    path = "/api/v1/customers/{customer:str}"

    @get("/wallet", opt=reads(errors=("WALLET_NOT_FOUND",)))
    async def read_wallet(self, customer: FromPath[str], vendor: Vendor, wallets: Wallets) -> Envelope[s.Wallet]:
        view = await wallets.reads.read(vendor.vendor_id, customer_id_of(customer))
        return Envelope(s.Wallet.of(view))

    @get("/ledger", opt=reads(query=s.LedgerQuery))
    async def list_ledger(
        self,
        request: Request[Any, Any, Any],
        customer: FromPath[str],
        params: NamedDependency[s.LedgerQuery],
        vendor: Vendor,
        wallets: Wallets,
    ) -> Envelope[Page[s.LedgerEntry]]:
        page = page_number(request)
        filters = LedgerFilter(
            date_from=parse_datetime_or_date(params.date_from) if isinstance(params.date_from, str) else None,
            date_to=parse_datetime_or_date(params.date_to) if isinstance(params.date_to, str) else None,
            type=params.type if isinstance(params.type, str) else None,
        )
        entries, total = await wallets.reads.entries(
            vendor.vendor_id,
            customer_id_of(customer),
            filters,
            offset=offset_of(page, params.per_page),
            limit=params.per_page,
        )
        return Envelope(
            paginate(
                request,
                [s.LedgerEntry.of(e) for e in entries],
                total=total,
                page=page,
                per_page=params.per_page,
            )
        )

    @post(
        "/wallet/adjust",
        opt=reads(
            body=s.WalletAdjust,
            errors=("WALLET_NOT_FOUND", "INSUFFICIENT_BALANCE", "IDEMPOTENCY_KEY_CONFLICT", "CUSTOMER_DEACTIVATED"),
            success=(200,),  # a replay of the same idempotency key answers the first entry again
        ),
    )
    async def adjust_wallet(
        self,
        customer: FromPath[str],
        payload: NamedDependency[s.WalletAdjust],
        vendor: Vendor,
        writer: Writer,
        clock: Clk,
        config: Config,
    ) -> Response[Envelope[s.LedgerEntry]]:
        """A till's write: prepared statements in one transaction on the request's connection."""
        done = await till_adjust(
            writer,
            vendor.vendor_id,
            customer_id_of(customer),
            Adjustment(
                payload.amount, payload.reason, payload.idempotency_key, Causer(CauserType.API_CLIENT, vendor.client_id)
            ),
            expire_after_days=vendor.point_expiry_days,
            now=clock.now(),
        )
        await wake_deliveries(config, done.deliveries)
        # ADJUST-2: a new adjustment answers 201, its replay 200
        return Response(Envelope(done.entry), status_code=201 if done.created else 200)
