"""Admin API: merging two accounts of one person (MERGE-1 to MERGE-7)."""

from __future__ import annotations

from litestar import Controller, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from loyalty_http.access.auth import ADMIN_CAUSER
from loyalty_http.customers.schemas import Customer
from loyalty_http.params import Customers, Merges, customer_id_of, vendor_id_of
from loyalty_http.route_options import reads
from loyalty_http.wallet.schemas import MergeBody, Merged
from loyalty_http.wire.envelope import Envelope


class AdminWalletController(Controller):
    path = "/admin/v1/vendors/{vendor_id:str}"

    @post(
        "/customers/{customer_id:str}/merge",
        opt=reads(auth="admin", body=MergeBody, errors=("CUSTOMER_DEACTIVATED",)),
        status_code=200,
    )
    async def merge_customers(
        self,
        vendor_id: FromPath[str],
        customer_id: FromPath[str],
        payload: NamedDependency[MergeBody],
        customers: Customers,
        merges: Merges,
    ) -> Envelope[Merged]:
        """The customer in the path closes; ``into_customer_id`` stays."""
        vendor = vendor_id_of(vendor_id)
        closing = customer_id_of(customer_id)
        await merges.merge(vendor, closing, payload.into_customer_id, causer=ADMIN_CAUSER)
        return Envelope(
            Merged(
                kept=Customer.of(await customers.reads.get(vendor, payload.into_customer_id)),
                closed=Customer.of(await customers.reads.get(vendor, closing)),
            )
        )
