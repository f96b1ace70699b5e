"""The events feed and the webhook endpoints. Both carry every customer's personal data, so they
need the ``webhooks`` scope, which the operator grants a client explicitly."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from litestar import Controller, Request, delete, get, patch, post
from litestar.di import NamedDependency
from litestar.params import FromPath

from loyalty_core.clock import midnight_utc
from loyalty_core.events import errors as ee
from loyalty_core.events.reads import one_event, page_of_events
from loyalty_core.events.services.endpoints import WebhookEndpoints
from loyalty_core.tenancy.errors import Forbidden
from loyalty_core.tenancy.rules.access import VendorContext
from loyalty_http.events import schemas as s
from loyalty_http.params import Clk, Config, Db, present
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.pagination import Page, page_number, paginate
from loyalty_http.wire.paths import parse_id
from loyalty_http.wire.validation import parse_datetime_or_date

Vendor = NamedDependency[VendorContext]
SCOPE = "webhooks"
_ENDPOINT = ("FORBIDDEN", ee.WebhookEndpointNotFound)


def require_scope(vendor: VendorContext) -> int:
    if SCOPE not in vendor.scopes:
        raise Forbidden("This token may not read events or manage webhooks (it lacks the webhooks scope).")
    return vendor.vendor_id


def _instant(value: str | Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    parsed = parse_datetime_or_date(value)
    return midnight_utc(parsed) if isinstance(parsed, date) and not isinstance(parsed, datetime) else parsed


def _endpoint_id(raw: str) -> int:
    return parse_id(raw, ee.WebhookEndpointNotFound, "No webhook endpoint of the shop has this id.", id=raw)


def _service(db: Any, clock: Any, config: Any) -> WebhookEndpoints:
    sealer = config.webhook_sealer
    if sealer is None:
        raise RuntimeError("the service composed the HTTP layer without a webhook sealer")
    return WebhookEndpoints(db, clock, sealer, config.resolver, test_mode=config.test_clock is not None)


class EventController(Controller):
    path = "/api/v1/events"

    @get("/", opt=reads(query=s.EventQuery, errors=("FORBIDDEN",)))
    async def list_events(
        self, request: Request[Any, Any, Any], params: NamedDependency[s.EventQuery], vendor: Vendor, db: Db
    ) -> Envelope[Page[s.Event]]:
        vendor_id = require_scope(vendor)
        page = page_number(request)
        rows, total = await page_of_events(
            db,
            vendor_id,
            event_type=params.type if isinstance(params.type, str) else None,
            created_after=_instant(params.created_after),
            page=page,
            per_page=params.per_page,
        )
        items = [s.Event.of(r) for r in rows]
        return Envelope(paginate(request, items, total=total, page=page, per_page=params.per_page))

    @get("/{event_id:str}", opt=reads(errors=("FORBIDDEN", ee.EventNotFound)))
    async def read_event(self, event_id: FromPath[str], vendor: Vendor, db: Db) -> Envelope[s.Event]:
        return Envelope(s.Event.of(await one_event(db, require_scope(vendor), event_id)))


class WebhookEndpointController(Controller):
    path = "/api/v1/webhook-endpoints"

    @post("/", opt=reads(body=s.EndpointCreate, errors=("FORBIDDEN",)), status_code=201)
    async def create_endpoint(
        self, payload: NamedDependency[s.EndpointCreate], vendor: Vendor, db: Db, clock: Clk, config: Config
    ) -> Envelope[s.EndpointWithSecret]:
        made = await _service(db, clock, config).create(
            require_scope(vendor),
            url=payload.url,
            events=list(payload.events),
            description=payload.description,
            enabled=payload.enabled,
        )
        return Envelope(s.EndpointWithSecret.of(made.endpoint, made.secret))

    @get("/", opt=reads(query=s.EndpointQuery, errors=("FORBIDDEN",)))
    async def list_endpoints(
        self,
        request: Request[Any, Any, Any],
        params: NamedDependency[s.EndpointQuery],
        vendor: Vendor,
        db: Db,
        clock: Clk,
        config: Config,
    ) -> Envelope[Page[s.Endpoint]]:
        page = page_number(request)
        rows, total = await _service(db, clock, config).page(require_scope(vendor), page=page, per_page=params.per_page)
        items = [s.Endpoint.of(e) for e in rows]
        return Envelope(paginate(request, items, total=total, page=page, per_page=params.per_page))

    @get("/{endpoint_id:str}", opt=reads(errors=_ENDPOINT))
    async def read_endpoint(
        self, endpoint_id: FromPath[str], vendor: Vendor, db: Db, clock: Clk, config: Config
    ) -> Envelope[s.Endpoint]:
        found = await _service(db, clock, config).get(require_scope(vendor), _endpoint_id(endpoint_id))
        return Envelope(s.Endpoint.of(found))

    @patch("/{endpoint_id:str}", opt=reads(body=s.EndpointPatch, errors=_ENDPOINT))
    async def update_endpoint(
        self,
        endpoint_id: FromPath[str],
        payload: NamedDependency[s.EndpointPatch],
        vendor: Vendor,
        db: Db,
        clock: Clk,
        config: Config,
    ) -> Envelope[s.Endpoint]:
        changes = present(payload)
        changed = await _service(db, clock, config).update(require_scope(vendor), _endpoint_id(endpoint_id), changes)
        return Envelope(s.Endpoint.of(changed))

    @delete("/{endpoint_id:str}", opt=reads(errors=_ENDPOINT), status_code=204)
    async def delete_endpoint(
        self, endpoint_id: FromPath[str], vendor: Vendor, db: Db, clock: Clk, config: Config
    ) -> None:
        await _service(db, clock, config).delete(require_scope(vendor), _endpoint_id(endpoint_id))

    @post("/{endpoint_id:str}/rotate-secret", opt=reads(errors=_ENDPOINT), status_code=200)
    async def rotate_secret(
        self, endpoint_id: FromPath[str], vendor: Vendor, db: Db, clock: Clk, config: Config
    ) -> Envelope[s.EndpointWithSecret]:
        made = await _service(db, clock, config).rotate_secret(require_scope(vendor), _endpoint_id(endpoint_id))
        return Envelope(s.EndpointWithSecret.of(made.endpoint, made.secret))

    # a disabled endpoint is sent no ping (422)
    @post("/{endpoint_id:str}/test", opt=reads(errors=(*_ENDPOINT, "VALIDATION_ERROR")), status_code=202)
    async def test_endpoint(
        self, endpoint_id: FromPath[str], vendor: Vendor, db: Db, clock: Clk, config: Config
    ) -> Envelope[s.PingSent]:
        event_id = await _service(db, clock, config).ping(require_scope(vendor), _endpoint_id(endpoint_id))
        return Envelope(s.PingSent(event_id=event_id))

    @get("/{endpoint_id:str}/deliveries", opt=reads(query=s.EndpointQuery, errors=_ENDPOINT))
    async def list_deliveries(
        self,
        request: Request[Any, Any, Any],
        endpoint_id: FromPath[str],
        params: NamedDependency[s.EndpointQuery],
        vendor: Vendor,
        db: Db,
        clock: Clk,
        config: Config,
    ) -> Envelope[Page[s.Delivery]]:
        page = page_number(request)
        rows, total = await _service(db, clock, config).deliveries(
            require_scope(vendor), _endpoint_id(endpoint_id), page=page, per_page=params.per_page
        )
        items = [s.Delivery.of(d) for d in rows]
        return Envelope(paginate(request, items, total=total, page=page, per_page=params.per_page))
