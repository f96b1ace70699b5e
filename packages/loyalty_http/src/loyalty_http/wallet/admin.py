"""Admin API: merging two accounts of one person (contract 2; spec, Merged customers)."""

from __future__ import annotations

from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.params import FromPath
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.customers.errors import CustomerNotFound
from loyalty_core.customers.services import CustomerService
from loyalty_core.wallet.services import Causer, WalletService
from loyalty_http.admin.tenancy import vendor_id_of
from loyalty_http.customers.schemas import Customer
from loyalty_http.route_options import reads
from loyalty_http.wallet.schemas import MergeBody, Merged
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.paths import parse_id

PORTAL = Causer("portal_user", "admin")


class AdminWalletController(Controller):
    path = "/admin/v1/vendors/{vendor_id:str}"

    @post("/customers/{customer_id:str}/merge", opt=reads(auth="admin", body=MergeBody), status_code=200)
    async def merge_customers(
        self,
        vendor_id: FromPath[str],
        customer_id: FromPath[str],
        payload: NamedDependency[MergeBody],
        db: NamedDependency[AsyncSession],
        clock: NamedDependency[Clock],
    ) -> Envelope[Merged]:
        """The customer in the path closes; ``into_customer_id`` stays."""
        vendor = vendor_id_of(vendor_id)
        closing = parse_id(customer_id, CustomerNotFound, "No customer with this id.", customer_id=customer_id)
        await WalletService(db, clock).merge(vendor, closing, payload.into_customer_id, causer=PORTAL)
        customers = CustomerService(db, clock)
        return Envelope(
            Merged(
                kept=Customer.from_view(await customers.get(vendor, payload.into_customer_id)),
                closed=Customer.from_view(await customers.get(vendor, closing)),
            )
        )
