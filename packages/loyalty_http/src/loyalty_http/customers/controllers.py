"""Customer endpoints of the public API and the unsubscribe link
(CONSENT-4)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get, post, route
from litestar.di import NamedDependency
from litestar.params import FromPath

from loyalty_core.accounts.till_lookup import customer_found
from loyalty_core.customers import errors as ce
from loyalty_core.customers.rules import consent
from loyalty_core.referrals.till_referrals import customer_referrals
from loyalty_core.tenancy.rules.access import VendorContext
from loyalty_http.config import HttpConfig
from loyalty_http.customers import schemas as s
from loyalty_http.params import Companion, Config, Customers, Reader, customer_id_of
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.pagination import Page, offset_of, page_number, paginate
from loyalty_http.wire.paths import refuse_encoded_slash

Vendor = NamedDependency[VendorContext]


def unsubscribe_key(config: HttpConfig) -> bytes:
    return consent.unsubscribe_key(config.jwt_secret)


def unsubscribe_path(config: HttpConfig, vendor_id: int, customer_id: int) -> str:
    return f"/unsubscribe/{consent.unsubscribe_token(unsubscribe_key(config), vendor_id, customer_id)}"


def api_provenance(vendor: VendorContext) -> consent.Provenance:
    """CONSENT-4: a decision an integration sent, recorded by its client."""
    return consent.Provenance(consent.API, vendor.client_id)


class CustomerController(Controller):
    path = "/api/v1/customers"

    @post(
        "/",
        opt=reads(
            body=s.CustomerCreate,
            errors=(
                "EXTERNAL_ID_DUPLICATE",
                "IDENTIFIER_DUPLICATE",
                "LOYALTY_CARD_NOT_FOUND",
                "MARKETING_CONSENT_UNDER_AGE",
            ),
        ),
        status_code=201,
    )
    async def register_customer(
        self, payload: NamedDependency[s.CustomerCreate], vendor: Vendor, customers: Customers
    ) -> Envelope[s.Customer]:
        view = await customers.enrolment.register(
            vendor.vendor_id,
            payload.profile(),
            provenance=api_provenance(vendor),
            referral_code=payload.referral_code if isinstance(payload.referral_code, str) else None,
        )
        return Envelope(s.Customer.of(view))

    @get("/lookup", opt=reads(query=s.CustomerLookup, errors=("CUSTOMER_NOT_FOUND",), companion=s.lookup_read))
    async def lookup_customer(self, companion: Companion) -> Envelope[s.Customer]:
        """The customer behind an identifier (a card number, an e-mail, a phone number) or an ``external_id``."""
        # the till's hottest read rode on the token check's statement: one round trip in all
        return Envelope(s.Customer.of(customer_found(companion)))

    @post(
        "/link-external-id",
        opt=reads(
            body=s.LinkExternalId, errors=("CUSTOMER_NOT_FOUND", "CUSTOMER_ALREADY_LINKED", "EXTERNAL_ID_DUPLICATE")
        ),
        status_code=200,
    )
    async def link_external_id(
        self, payload: NamedDependency[s.LinkExternalId], vendor: Vendor, customers: Customers
    ) -> Envelope[s.Customer]:
        view = await customers.profile.link_external_id(
            vendor.vendor_id,
            payload.external_id,
            identifier=payload.identifier if isinstance(payload.identifier, str) else None,
            customer_id=payload.customer_id if isinstance(payload.customer_id, int) else None,
        )
        return Envelope(s.Customer.of(view))

    @route(
        "/by-external-id/{external_id:str}",
        http_method=["PUT", "PATCH"],
        opt=reads(
            body=s.CustomerUpdate,
            errors=("EXTERNAL_ID_NOT_FOUND", "IDENTIFIER_DUPLICATE", "MARKETING_CONSENT_UNDER_AGE"),
        ),
        status_code=200,
        guards=[refuse_encoded_slash],
    )
    async def update_customer(
        self,
        external_id: FromPath[str],
        payload: NamedDependency[s.CustomerUpdate],
        vendor: Vendor,
        customers: Customers,
    ) -> Envelope[s.Customer]:
        view = await customers.profile.update_by_external_id(
            vendor.vendor_id, external_id, payload.changes(), provenance=api_provenance(vendor)
        )
        return Envelope(s.Customer.of(view))


class CustomerReferralsController(Controller):
    path = "/api/v1/customers/{customer:str}"

    @get("/referrals", opt=reads(query=s.ReferralsQuery, errors=("CUSTOMER_NOT_FOUND",)))
    async def list_referrals(
        self,
        request: Request[Any, Any, Any],
        customer: FromPath[str],
        params: NamedDependency[s.ReferralsQuery],
        vendor: Vendor,
        reader: Reader,
    ) -> Envelope[Page[s.ReferralItem]]:
        """The referrals in which the customer is the referrer, newest first (REFERRAL-9)."""
        page = page_number(request)
        items, total = await customer_referrals(
            reader,
            vendor.vendor_id,
            customer_id_of(customer),
            offset=offset_of(page, params.per_page),
            limit=params.per_page,
        )
        return Envelope(paginate(request, items, total=total, page=page, per_page=params.per_page))


class UnsubscribeController(Controller):
    """The link in campaign mail: signed, never expiring, no login (CONSENT-4)."""

    path = "/unsubscribe"

    # unattributed, so it counts in the calling address's allowance (RATE-5)
    @get("/{token:str}", opt=reads(auth="none", limit="address", errors=("CUSTOMER_NOT_FOUND",)))
    async def unsubscribe(self, config: Config, token: FromPath[str], customers: Customers) -> Envelope[s.Unsubscribed]:
        signed_for = consent.read_unsubscribe_token(unsubscribe_key(config), token)
        if signed_for is None:
            raise ce.CustomerNotFound("This unsubscribe link is not valid.")
        vendor_id, customer_id = signed_for
        await customers.consent.unsubscribe(vendor_id, customer_id)
        return Envelope(s.Unsubscribed(unsubscribed=True))

    # RFC 8058 one-click: a mail client posts ``List-Unsubscribe=One-Click`` to the link (MAIL-17)
    @post("/{token:str}", opt=reads(auth="none", limit="address", errors=("CUSTOMER_NOT_FOUND",)), status_code=200)
    async def unsubscribe_one_click(
        self, config: Config, token: FromPath[str], customers: Customers
    ) -> Envelope[s.Unsubscribed]:
        signed_for = consent.read_unsubscribe_token(unsubscribe_key(config), token)
        if signed_for is None:
            raise ce.CustomerNotFound("This unsubscribe link is not valid.")
        vendor_id, customer_id = signed_for
        await customers.consent.unsubscribe(vendor_id, customer_id)
        return Envelope(s.Unsubscribed(unsubscribed=True))
