"""Admin API for the portal-only customer actions (card batches, further cards, blocking cards and
identifiers, deactivation, anonymization, the consent a vendor user records, and the attested
import), and the admin API's customer search and card list."""

from __future__ import annotations

from datetime import date
from typing import Any

from litestar import Controller, Request, get, patch, post, put
from litestar.di import NamedDependency
from litestar.params import FromPath

from loyalty_core.accounts.services import CustomerService
from loyalty_core.accounts.services.enrolment import ImportOutcome
from loyalty_core.customers.reads.cards import CardState
from loyalty_core.customers.rules import consent
from loyalty_core.errors import DomainError, ValidationFailed
from loyalty_core.passes.services.records import PassRecords
from loyalty_http.customers import admin_schemas as s
from loyalty_http.customers.controllers import unsubscribe_path
from loyalty_http.customers.schemas import Customer
from loyalty_http.params import (
    CardListDep,
    Clk,
    Config,
    Customers,
    CustomerSearchDep,
    Db,
    KnownVendor,
    customer_id_of,
    given,
)
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.pagination import Page, page_number, paginate

AnyRequest = Request[Any, Any, Any]

PORTAL = consent.Provenance(consent.PORTAL, consent.PORTAL_USER)

_FIELD_OF_CODE = {
    "EXTERNAL_ID_DUPLICATE": "external_id",
    "IDENTIFIER_DUPLICATE": "identifiers",
    "LOYALTY_CARD_NOT_FOUND": "identifiers",
    "MARKETING_CONSENT_UNDER_AGE": "marketing_consent",
}


class AdminCustomersController(Controller):
    path = "/admin/v1/vendors/{vendor_id:str}"

    @post("/card-batches", opt=reads(auth="admin", body=s.CardBatchCreate))
    async def create_card_batch(
        self,
        payload: NamedDependency[s.CardBatchCreate],
        customers: Customers,
        known_vendor: KnownVendor,
    ) -> Envelope[s.CardBatch]:
        return Envelope(s.CardBatch(codes=await customers.identifiers.issue_card_batch(known_vendor, payload.count)))

    @patch("/cards/{code:str}", opt=reads(auth="admin", body=s.ActiveSet, errors=("NOT_FOUND",)))
    async def set_card_active(
        self,
        code: FromPath[str],
        payload: NamedDependency[s.ActiveSet],
        customers: Customers,
        known_vendor: KnownVendor,
    ) -> Envelope[s.Card]:
        return Envelope(s.Card.of(await customers.identifiers.set_card_active(known_vendor, code, payload.active)))

    @get("/customers/{customer_id:str}", opt=reads(auth="admin"))
    async def get_customer(
        self,
        config: Config,
        customer_id: FromPath[str],
        customers: Customers,
        known_vendor: KnownVendor,
    ) -> Envelope[s.AdminCustomer]:
        return Envelope(await _admin_view(config, customers, known_vendor, customer_id_of(customer_id)))

    @post(
        "/customers/{customer_id:str}/cards",
        opt=reads(
            auth="admin",
            body=s.CardAdd,
            errors=("CUSTOMER_DEACTIVATED", "LOYALTY_CARD_NOT_FOUND", "IDENTIFIER_DUPLICATE"),
        ),
    )
    async def add_card(
        self,
        customer_id: FromPath[str],
        payload: NamedDependency[s.CardAdd],
        customers: Customers,
        known_vendor: KnownVendor,
    ) -> Envelope[Customer]:
        code = payload.code if isinstance(payload.code, str) else None
        return Envelope(
            Customer.of(await customers.identifiers.add_card(known_vendor, customer_id_of(customer_id), code))
        )

    @patch(
        "/customers/{customer_id:str}/identifiers/{value:str}",
        opt=reads(auth="admin", body=s.ActiveSet, errors=("NOT_FOUND",)),
    )
    async def set_identifier_active(
        self,
        customer_id: FromPath[str],
        value: FromPath[str],
        payload: NamedDependency[s.ActiveSet],
        customers: Customers,
        known_vendor: KnownVendor,
    ) -> Envelope[Customer]:
        view = await customers.identifiers.set_identifier_active(
            known_vendor, customer_id_of(customer_id), value, payload.active
        )
        return Envelope(Customer.of(view))

    @post("/customers/{customer_id:str}/deactivate", opt=reads(auth="admin"), status_code=200)
    async def deactivate_customer(
        self, customer_id: FromPath[str], customers: Customers, known_vendor: KnownVendor
    ) -> Envelope[Customer]:
        return Envelope(Customer.of(await customers.status.deactivate(known_vendor, customer_id_of(customer_id))))

    @post("/customers/{customer_id:str}/anonymize", opt=reads(auth="admin"), status_code=200)
    async def anonymize_customer(
        self, customer_id: FromPath[str], customers: Customers, known_vendor: KnownVendor, db: Db, clock: Clk
    ) -> Envelope[s.Anonymized]:
        cid = customer_id_of(customer_id)
        await customers.status.anonymize(known_vendor, cid)
        # PASS-17: the customer's pass and its devices' registrations go with the personal data
        await PassRecords(db, clock).forget(known_vendor, cid)
        return Envelope(s.Anonymized(id=cid, status="anonymized"))

    @put(
        "/customers/{customer_id:str}/consent",
        opt=reads(auth="admin", body=s.ConsentSet, errors=("MARKETING_CONSENT_UNDER_AGE",)),
    )
    async def record_consent(
        self,
        config: Config,
        customer_id: FromPath[str],
        payload: NamedDependency[s.ConsentSet],
        customers: Customers,
        known_vendor: KnownVendor,
    ) -> Envelope[s.AdminCustomer]:
        cid = customer_id_of(customer_id)
        version = payload.marketing_consent_statement_version
        await customers.consent.record(
            known_vendor,
            cid,
            payload.marketing_consent,
            str(version) if payload.marketing_consent else None,
            provenance=PORTAL,
        )
        return Envelope(await _admin_view(config, customers, known_vendor, cid))

    @post("/customers/import", opt=reads(auth="admin", body=s.CustomerImport), status_code=200)
    async def import_customers(
        self,
        payload: NamedDependency[s.CustomerImport],
        customers: Customers,
        known_vendor: KnownVendor,
    ) -> Envelope[s.ImportResults]:
        checked = payload.items()
        valid = [(index, item) for index, item in enumerate(checked) if isinstance(item, s.ImportItem)]
        outcomes = await customers.enrolment.import_customers(
            known_vendor,
            importer=payload.importer if isinstance(payload.importer, str) else None,
            attested_on=payload.attested_on if isinstance(payload.attested_on, date) else None,
            items=[item.profile() for _, item in valid],
            opening_points=[item.opening() for _, item in valid],
        )
        results: list[s.ImportResult] = [
            s.ImportResult(index=index, status="error", customer=None, code="VALIDATION_ERROR", errors=item)
            for index, item in enumerate(checked)
            if not isinstance(item, s.ImportItem)
        ]
        results.extend(_result(index, outcome) for (index, _), outcome in zip(valid, outcomes, strict=True))
        results.sort(key=lambda r: r.index)
        return Envelope(s.ImportResults(results=results))


async def _admin_view(config: Config, customers: CustomerService, vendor_id: int, customer_id: int) -> s.AdminCustomer:
    view = await customers.reads.get(vendor_id, customer_id)
    events = await customers.consent.history(vendor_id, customer_id)
    return s.AdminCustomer.of(view, events=events, unsubscribe_url=unsubscribe_path(config, vendor_id, customer_id))


def _result(index: int, outcome: ImportOutcome) -> s.ImportResult:
    if outcome.customer is not None:
        return s.ImportResult(index=index, status="created", customer=Customer.of(outcome.customer))
    error: DomainError | None = outcome.error
    assert error is not None
    if isinstance(error, ValidationFailed):
        errors = dict(error.fields)
    else:
        errors = {_FIELD_OF_CODE.get(error.code, "customer"): [error.message]}
    return s.ImportResult(index=index, status="error", customer=None, code=error.code, errors=errors)


class AdminCustomerReadsController(Controller):
    path = "/admin/v1/vendors/{vendor_id:str}"

    @get("/customers", opt=reads(auth="admin", query=s.CustomerSearchQuery))
    async def search_customers(
        self,
        request: AnyRequest,
        params: NamedDependency[s.CustomerSearchQuery],
        known_vendor: KnownVendor,
        customer_search: CustomerSearchDep,
    ) -> Envelope[Page[Customer]]:
        """``q`` finds a card code, email or external id exactly, or a part of a name without regard
        to case or accents; without it, every customer (anonymized ones are gone)."""
        page = page_number(request)
        found = await customer_search.search(known_vendor, given(params.q), page=page, per_page=params.per_page)
        items = [Customer.of(c) for c in found.items]
        return Envelope(paginate(request, items, total=found.total, page=page, per_page=params.per_page))

    @get("/cards", opt=reads(auth="admin", query=s.CardQuery))
    async def list_cards(
        self,
        request: AnyRequest,
        params: NamedDependency[s.CardQuery],
        known_vendor: KnownVendor,
        card_list: CardListDep,
    ) -> Envelope[Page[s.CardItem]]:
        page = page_number(request)
        status = CardState(params.status) if isinstance(params.status, str) else None
        found = await card_list.cards(known_vendor, status=status, page=page, per_page=params.per_page)
        items = [s.CardItem.of(c) for c in found.items]
        return Envelope(paginate(request, items, total=found.total, page=page, per_page=params.per_page))
