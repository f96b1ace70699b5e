"""Cross-tenant sweep over every registered route (TENANCY-1, TENANCY-2: all data access is
scoped to the token's vendor; another vendor's id, code or external id answers the same not-found
as one that does not exist).

An owner vendor holds one of everything; for each route an intruder calls it with the owner's
ids, codes and external ids (its own token on the public API, the admin token with its own vendor
in the path on vendor-scoped admin routes) and gets the route's own answer with none of the owner's
data, and the owner's rows do not change. ``CASES`` and ``NOT_SWEPT`` together must name every
route the app registers, so a new route fails ``test_every_route_is_swept_or_says_why_not``
until it is listed here.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import Table, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from loyalty_core.clock import SystemClock
from loyalty_core.events.services.recording import record_event
from loyalty_core.models import metadata
from loyalty_core.referrals.codes import referral_code
from tests.support.app import ADMIN
from tests.support.customers import CUSTOMERS, card_batch, portal, register
from tests.support.envelope import error_of
from tests.support.payloads import stand_in
from tests.support.products import PRODUCTS, create
from tests.support.routes import endpoints
from tests.support.tenants import Tenant, add_client, admin, make_tenant
from tests.support.webhooks import ALL_SCOPES, make_endpoint

SECRET = "Ownerina-7f3c"
"""Every owner text the intruder could be shown carries this marker; no answer may hold it."""


@dataclass(frozen=True)
class World:
    owner: Tenant
    intruder: Tenant
    customer_id: int
    second_customer_id: int
    external_id: str
    email: str
    card: str
    free_card: str
    product: str
    reward_id: int
    branch: str
    code: str
    voucher: str
    earn_rule_id: int
    campaign_id: int
    mailing_id: int
    endpoint_id: int
    event_id: str
    transaction_id: int


@dataclass(frozen=True)
class Call:
    """One request of the intruder and the answer the route gives it."""

    status: int
    code: str | None
    rule: str
    path: Callable[[World], dict[str, Any]] = lambda w: {}
    body: Callable[[World], Any] | None = None
    query: Callable[[World], dict[str, Any]] | None = None
    form: Callable[[World], dict[str, Any]] | None = None
    token: Literal["intruder", "admin", "none"] = "intruder"


def _product(w: World) -> dict[str, Any]:
    return {"external_id": w.product}


def _customer(w: World) -> dict[str, Any]:
    return {"customer": w.customer_id}


def _transaction(w: World) -> dict[str, Any]:
    return {"transaction_id": w.transaction_id}


def _by_external_id(w: World) -> dict[str, Any]:
    return {"external_id": w.external_id}


def _admin_customer(w: World) -> dict[str, Any]:
    """Vendor-scoped admin paths: the intruder's vendor, the owner's customer."""
    return {"vendor_id": w.intruder.vendor_id, "customer_id": w.customer_id}


def _named(**body: Any) -> Callable[[World], Any]:
    return lambda w: body


def _searched(q: Callable[[World], str]) -> Callable[[World], dict[str, Any]]:
    return lambda w: {"q": q(w)}


def _owners_in_intruders_vendor(param: str, attr: str) -> Callable[[World], dict[str, Any]]:
    """The intruder's vendor id with the owner's ``attr`` of ``World`` as ``param``."""
    return lambda w: {"vendor_id": w.intruder.vendor_id, param: getattr(w, attr)}


def _steal_token(w: World) -> dict[str, Any]:
    """The owner's client id with the intruder's secret."""
    return {
        "grant_type": "client_credentials",
        "client_id": w.owner.client_id,
        "client_secret": w.intruder.client_secret,
    }


PRODUCT_404 = (404, "PRODUCT_NOT_FOUND", "Products: 404 PRODUCT_NOT_FOUND")
CUSTOMER_404 = (404, "CUSTOMER_NOT_FOUND", "customers, wallet and ledger: 404 CUSTOMER_NOT_FOUND")
ADMIN_CUSTOMER_404 = (404, "CUSTOMER_NOT_FOUND", "vendor-scoped admin path, another vendor's customer")
ADMIN_404 = (404, "NOT_FOUND", "vendor-scoped admin path: the admin API's not-found")
TRANSACTION_404 = (404, "TRANSACTION_NOT_FOUND", "another vendor's purchase: 404 TRANSACTION_NOT_FOUND")
CREATES_OWN = "ids are unique per vendor: the owner's id makes the caller's own row"
OWN_LIST = "the admin list reads the path vendor's own rows only, whatever the filter names"


def _intruder_vendor(w: World) -> dict[str, Any]:
    return {"vendor_id": w.intruder.vendor_id}


CASES: dict[str, list[Call]] = {
    # --- catalogue ---------------------------------------------------------------------------------
    # search is a part of the marker, which the answer's links echo; the owner's products match it
    "GET /api/v1/products": [Call(200, None, "lists the vendor's products", query=lambda w: {"search": SECRET[:8]})],
    "POST /api/v1/products": [Call(201, None, CREATES_OWN, body=lambda w: {"external_id": w.product, "name": "m"})],
    "POST /api/v1/products/batch": [
        Call(200, None, CREATES_OWN, body=lambda w: {"products": [{"external_id": w.product, "name": "m"}]})
    ],
    "GET /api/v1/products/{external_id}": [Call(*PRODUCT_404, path=_product)],
    "PATCH /api/v1/products/{external_id}": [Call(*PRODUCT_404, path=_product, body=_named(name="x"))],
    "DELETE /api/v1/products/{external_id}": [Call(*PRODUCT_404, path=_product)],
    "PUT /api/v1/products/{external_id}": [Call(201, None, CREATES_OWN, path=_product, body=_named(name="m"))],
    # "batch" as a product id: the owner holds a product with external_id "batch" too
    "GET /api/v1/products/batch": [Call(*PRODUCT_404)],
    "PATCH /api/v1/products/batch": [Call(*PRODUCT_404, body=_named(name="x"))],
    "DELETE /api/v1/products/batch": [Call(*PRODUCT_404)],
    "PUT /api/v1/products/batch": [Call(201, None, CREATES_OWN, body=_named(name="m"))],
    # --- rewards -----------------------------------------------------------------------------------
    "POST /api/v1/products/{external_id}/reward": [Call(*PRODUCT_404, path=_product, body=_named(point_cost=10))],
    "DELETE /admin/v1/vendors/{vendor_id}/rewards/{reward_id}": [
        Call(
            404,
            "REWARD_NOT_FOUND",
            "another vendor's reward id: 404 REWARD_NOT_FOUND",
            path=lambda w: {"vendor_id": w.intruder.vendor_id, "reward_id": w.reward_id},
            token="admin",
        )
    ],
    "POST /admin/v1/vendors/{vendor_id}/rewards": [
        Call(
            201,
            None,
            CREATES_OWN,
            path=lambda w: {"vendor_id": w.intruder.vendor_id},
            body=lambda w: {"type": "free_product", "name": "m", "point_cost": 1},
            token="admin",
        )
    ],
    "PATCH /admin/v1/vendors/{vendor_id}/rewards/{reward_id}": [
        Call(
            404,
            "REWARD_NOT_FOUND",
            "another vendor's reward id: 404 REWARD_NOT_FOUND",
            path=lambda w: {"vendor_id": w.intruder.vendor_id, "reward_id": w.reward_id},
            body=lambda w: {"point_cost": 1},
            token="admin",
        )
    ],
    "GET /api/v1/rewards": [
        Call(
            200,
            None,
            "lists the vendor's rewards; the owner's customer matches nobody",
            query=lambda w: {"identifier": w.email},
        )
    ],
    # --- earning -----------------------------------------------------------------------------------
    "POST /api/v1/transactions": [
        Call(
            404,
            "CUSTOMER_NOT_FOUND",
            "the owner's identifier finds nobody here; keys are per vendor",
            body=lambda w: {"identifier": w.card, "idempotency_key": "k", "total_amount": 100},
        )
    ],
    "POST /api/v1/transactions/preview": [
        Call(
            404,
            "CUSTOMER_NOT_FOUND",
            "the owner's identifier finds nobody here",
            body=lambda w: {"identifier": w.email, "total_amount": 100, "branch": w.branch},
        )
    ],
    "GET /api/v1/customers/{customer}/transactions": [Call(*CUSTOMER_404, path=_customer)],
    "GET /api/v1/customers/{customer}/referrals": [Call(*CUSTOMER_404, path=_customer)],
    "GET /api/v1/transactions/{transaction_id}": [Call(*TRANSACTION_404, path=_transaction)],
    "GET /api/v1/transactions/{transaction_id}/returns": [Call(*TRANSACTION_404, path=_transaction)],
    "POST /api/v1/transactions/{transaction_id}/returns": [
        Call(*TRANSACTION_404, path=_transaction, body=_named(idempotency_key="k", amount=1))
    ],
    "POST /api/v1/redemptions": [
        Call(
            404,
            "CUSTOMER_NOT_FOUND",
            "the customer is checked first (REDEEM-1): the owner's customer is nobody here",
            body=lambda w: {"identifier": w.email, "reward_id": w.reward_id, "idempotency_key": "k"},
        )
    ],
    "POST /admin/v1/vendors/{vendor_id}/redemptions/{code}/cancel": [
        Call(
            404,
            "REDEMPTION_NOT_FOUND",
            "another vendor's code",
            path=lambda w: {"vendor_id": w.intruder.vendor_id, "code": w.code},
            token="admin",
        )
    ],
    "POST /admin/v1/vendors/{vendor_id}/rewards/{reward_id}/give": [
        Call(
            404,
            "CUSTOMER_NOT_FOUND",
            "another vendor's customer, checked first",
            path=lambda w: {"vendor_id": w.intruder.vendor_id, "reward_id": w.reward_id},
            body=lambda w: {"customer_id": w.customer_id},
            token="admin",
        )
    ],
    "POST /admin/v1/vendors/{vendor_id}/vouchers": [
        Call(
            404,
            "CUSTOMER_NOT_FOUND",
            "another vendor's customer id",
            path=lambda w: {"vendor_id": w.intruder.vendor_id},
            body=lambda w: {"customer_id": w.customer_id, "discount_type": "percentage", "discount_value": 5},
            token="admin",
        )
    ],
    "GET /api/v1/vouchers/{code}": [
        Call(404, "VOUCHER_NOT_FOUND", "another vendor's voucher code", path=lambda w: {"code": w.voucher})
    ],
    "POST /api/v1/vouchers/{code}/verify": [
        Call(
            404,
            "VOUCHER_NOT_FOUND",
            "another vendor's voucher code",
            path=lambda w: {"code": w.voucher},
            body=lambda w: {},
        )
    ],
    "GET /api/v1/redemptions/{code}": [
        Call(404, "REDEMPTION_NOT_FOUND", "another vendor's code", path=lambda w: {"code": w.code})
    ],
    "POST /api/v1/redemptions/{code}/verify": [
        Call(404, "REDEMPTION_NOT_FOUND", "another vendor's code", path=lambda w: {"code": w.code})
    ],
    # --- customers ---------------------------------------------------------------------------------
    "POST /api/v1/customers": [
        Call(
            422,
            "LOYALTY_CARD_NOT_FOUND",
            "LOYALTY_CARD_NOT_FOUND: not a free card of the vendor",
            body=lambda w: {"identifiers": [{"type": "loyalty_card", "value": w.free_card}]},
        ),
        Call(201, None, CREATES_OWN, body=lambda w: {"external_id": w.external_id, "email": w.email}),
        Call(
            422,
            "VALIDATION_ERROR",
            "the owner's customer's referral code refers nobody here",
            body=lambda w: {"referral_code": referral_code(w.customer_id)},
        ),
    ],
    "GET /api/v1/customers/lookup": [
        Call(*CUSTOMER_404, query=lambda w: {"identifier": w.email}),
        Call(*CUSTOMER_404, query=lambda w: {"identifier": w.card}),
        Call(*CUSTOMER_404, query=lambda w: {"external_id": w.external_id}),
    ],
    "POST /api/v1/customers/link-external-id": [
        Call(*CUSTOMER_404, body=lambda w: {"external_id": "MINE-1", "identifier": w.card}),
        Call(*CUSTOMER_404, body=lambda w: {"external_id": "MINE-1", "customer_id": w.customer_id}),
    ],
    "PUT /api/v1/customers/by-external-id/{external_id}": [
        Call(404, "EXTERNAL_ID_NOT_FOUND", "by external id", path=_by_external_id, body=_named(first_name="x"))
    ],
    "PATCH /api/v1/customers/by-external-id/{external_id}": [
        Call(404, "EXTERNAL_ID_NOT_FOUND", "by external id", path=_by_external_id, body=_named(first_name="x"))
    ],
    "GET /admin/v1/vendors/{vendor_id}/customers/{customer_id}": [
        Call(*ADMIN_CUSTOMER_404, path=_admin_customer, token="admin")
    ],
    "POST /admin/v1/vendors/{vendor_id}/customers/{customer_id}/anonymize": [
        Call(*ADMIN_CUSTOMER_404, path=_admin_customer, token="admin")
    ],
    "POST /admin/v1/vendors/{vendor_id}/customers/{customer_id}/deactivate": [
        Call(*ADMIN_CUSTOMER_404, path=_admin_customer, token="admin")
    ],
    "POST /admin/v1/vendors/{vendor_id}/customers/{customer_id}/cards": [
        Call(*ADMIN_CUSTOMER_404, path=_admin_customer, body=_named(), token="admin")
    ],
    "PUT /admin/v1/vendors/{vendor_id}/customers/{customer_id}/consent": [
        Call(*ADMIN_CUSTOMER_404, path=_admin_customer, body=_named(marketing_consent=False), token="admin")
    ],
    "PATCH /admin/v1/vendors/{vendor_id}/customers/{customer_id}/identifiers/{value}": [
        Call(
            *ADMIN_CUSTOMER_404,
            path=lambda w: {**_admin_customer(w), "value": w.card},
            body=_named(active=False),
            token="admin",
        )
    ],
    "PATCH /admin/v1/vendors/{vendor_id}/cards/{code}": [
        Call(
            *ADMIN_404,
            path=lambda w: {"vendor_id": w.intruder.vendor_id, "code": w.free_card},
            body=_named(active=False),
            token="admin",
        )
    ],
    "POST /admin/v1/vendors/{vendor_id}/customers/{customer_id}/merge": [
        Call(
            *ADMIN_CUSTOMER_404,
            path=_admin_customer,
            body=lambda w: {"into_customer_id": w.second_customer_id},
            token="admin",
        )
    ],
    # --- wallet ------------------------------------------------------------------------------------
    "GET /api/v1/customers/{customer}/wallet": [Call(*CUSTOMER_404, path=_customer)],
    "GET /api/v1/customers/{customer}/ledger": [Call(*CUSTOMER_404, path=_customer)],
    "POST /api/v1/customers/{customer}/wallet/adjust": [
        Call(*CUSTOMER_404, path=_customer, body=_named(amount=-5, reason="x", idempotency_key="k"))
    ],
    # --- passes ------------------------------------------------------------------------------------
    "GET /api/v1/customers/{customer}/wallet-pass": [
        Call(*CUSTOMER_404, path=_customer, query=_named(platform=p)) for p in ("platform_a", "platform_b")
    ],
    "POST /api/v1/customers/{customer}/send-card": [Call(*CUSTOMER_404, path=_customer, body=_named(channel="email"))],
    "POST /api/v1/customers/by-external-id/{external_id}/send-card": [
        Call(404, "EXTERNAL_ID_NOT_FOUND", "send-card by external id", path=_by_external_id, body=_named())
    ],
    "DELETE /admin/v1/vendors/{vendor_id}/email-suppressions/{email}": [
        Call(
            *ADMIN_404,
            path=lambda w: {"vendor_id": w.intruder.vendor_id, "email": w.email},
            token="admin",
        )
    ],
    # --- earning -----------------------------------------------------------------------------------
    **{
        f"{verb} /admin/v1/vendors/{{vendor_id}}/{what}/{{{param}}}": [
            Call(
                *ADMIN_404,
                path=_owners_in_intruders_vendor(param, attr),
                body=(lambda w: {"name": "x"}) if verb == "PATCH" else None,
                token="admin",
            )
        ]
        for what, param, attr in (
            ("earn-rules", "rule_id", "earn_rule_id"),
            ("campaigns", "campaign_id", "campaign_id"),
        )
        for verb in ("GET", "PATCH", "DELETE")
    },
    "GET /admin/v1/vendors/{vendor_id}/earn-rules": [
        Call(
            200,
            None,
            "lists the path vendor's own rules",
            path=lambda w: {"vendor_id": w.intruder.vendor_id},
            token="admin",
        )
    ],
    "GET /admin/v1/vendors/{vendor_id}/campaigns": [
        Call(
            200,
            None,
            "lists the path vendor's own campaigns",
            path=lambda w: {"vendor_id": w.intruder.vendor_id},
            token="admin",
        )
    ],
    "POST /admin/v1/vendors/{vendor_id}/earn-rules": [
        Call(
            201,
            None,
            CREATES_OWN,
            path=lambda w: {"vendor_id": w.intruder.vendor_id},
            body=lambda w: {"name": "m", "points_per_unit": 1, "unit_amount": 100},
            token="admin",
        )
    ],
    "POST /admin/v1/vendors/{vendor_id}/campaigns": [
        Call(
            403,
            "PLAN_FEATURE_UNAVAILABLE",
            "the path vendor's own plan decides: the intruder's plan lacks campaigns (EARN-12)",
            path=lambda w: {"vendor_id": w.intruder.vendor_id},
            body=lambda w: {"name": "m", "kind": "fixed_points", "points": 1},
            token="admin",
        )
    ],
    # --- tiers (TIER-7) -------------------------------------------------------------------------------
    "GET /api/v1/tiers": [Call(404, "NOT_FOUND", "the caller's own ladder only: the intruder has none")],
    "GET /admin/v1/vendors/{vendor_id}/tiers": [
        Call(404, "NOT_FOUND", "the path vendor's own ladder only", path=_intruder_vendor, token="admin")
    ],
    "PUT /admin/v1/vendors/{vendor_id}/tiers": [
        Call(
            403,
            "PLAN_FEATURE_UNAVAILABLE",
            "the path vendor's own plan decides: the intruder's plan lacks tiers (TIER-5)",
            path=_intruder_vendor,
            body=lambda w: {
                "basis": "spend",
                "tiers": [{"key": "a", "name": "A", "threshold": 0, "multiplier_percent": 100}],
            },
            token="admin",
        )
    ],
    "DELETE /admin/v1/vendors/{vendor_id}/tiers": [
        Call(
            403,
            "PLAN_FEATURE_UNAVAILABLE",
            "the path vendor's own plan decides: the intruder's plan lacks tiers (TIER-5)",
            path=_intruder_vendor,
            token="admin",
        )
    ],
    # --- the referral programme (REFERRAL-3, REFERRAL-4) -----------------------------------------------
    "GET /admin/v1/vendors/{vendor_id}/referral-programme": [
        Call(404, "NOT_FOUND", "the path vendor's own programme only", path=_intruder_vendor, token="admin")
    ],
    "PUT /admin/v1/vendors/{vendor_id}/referral-programme": [
        Call(
            403,
            "PLAN_FEATURE_UNAVAILABLE",
            "the path vendor's own plan decides: the intruder's plan lacks referrals (REFERRAL-3)",
            path=_intruder_vendor,
            body=lambda w: {"referrer_points": 1, "referee_points": 1},
            token="admin",
        )
    ],
    # --- the back office's reads ----------------------------------------------------------------------
    "GET /admin/v1/vendors/{vendor_id}/customers": [
        Call(200, None, OWN_LIST, path=_intruder_vendor, query=_searched(q), token="admin")
        for q in (
            lambda w: w.email,
            lambda w: w.card,
            lambda w: w.external_id,
            lambda w: SECRET[:8],
            lambda w: str(w.customer_id),
        )
    ],
    "GET /admin/v1/vendors/{vendor_id}/redemptions": [
        Call(200, None, OWN_LIST, path=_intruder_vendor, query=lambda w: {"code": w.code}, token="admin"),
        Call(200, None, OWN_LIST, path=_intruder_vendor, query=lambda w: {"customer_id": w.customer_id}, token="admin"),
    ],
    "GET /admin/v1/vendors/{vendor_id}/vouchers": [
        Call(200, None, OWN_LIST, path=_intruder_vendor, query=lambda w: {"customer_id": w.customer_id}, token="admin")
    ],
    **{
        f"GET /admin/v1/vendors/{{vendor_id}}/{what}": [Call(200, None, OWN_LIST, path=_intruder_vendor, token="admin")]
        for what in ("cards", "rewards", "branches", "clients", "usage", "liability")
    },
    "GET /admin/v1/vendors/{vendor_id}/rewards/{reward_id}": [
        Call(
            404,
            "REWARD_NOT_FOUND",
            "another vendor's reward id: 404 REWARD_NOT_FOUND",
            path=lambda w: {"vendor_id": w.intruder.vendor_id, "reward_id": w.reward_id},
            token="admin",
        )
    ],
    "GET /admin/v1/vendors/{vendor_id}/branches/{external_id}": [
        Call(*ADMIN_404, path=lambda w: {"vendor_id": w.intruder.vendor_id, "external_id": w.branch}, token="admin")
    ],
    # --- tenancy -----------------------------------------------------------------------------------
    "PATCH /admin/v1/vendors/{vendor_id}/branches/{external_id}": [
        Call(
            *ADMIN_404,
            path=lambda w: {"vendor_id": w.intruder.vendor_id, "external_id": w.branch},
            body=_named(active=False),
            token="admin",
        )
    ],
    "POST /oauth/token": [Call(401, "INVALID_CLIENT", "AUTH-7", form=_steal_token, token="none")],
    "POST /api/v1/oauth/token": [Call(401, "INVALID_CLIENT", "AUTH-7", form=_steal_token, token="none")],
}

PLATFORM = "platform-wide admin route: the admin token acts for every vendor, and the vendor is its subject"
OWN_IDENTITY = "acts on the path vendor's own identity or branding; takes no id of a row"


def _endpoint(w: World) -> dict[str, Any]:
    return {"endpoint_id": w.endpoint_id}


_ENDPOINT_GONE = "another vendor's webhook endpoint"
CASES |= {
    "GET /api/v1/events": [Call(200, None, "the intruder's feed holds only its own events")],
    "GET /api/v1/events/{event_id}": [
        Call(404, "EVENT_NOT_FOUND", "another vendor's event", path=lambda w: {"event_id": w.event_id})
    ],
    "POST /api/v1/webhook-endpoints": [
        Call(
            201,
            None,
            "makes the intruder's own endpoint",
            body=lambda w: {"url": "http://127.0.0.1:9/", "events": ["*"]},
        )
    ],
    "GET /api/v1/webhook-endpoints": [Call(200, None, "the intruder's list holds only its own endpoints")],
    "GET /api/v1/webhook-endpoints/{endpoint_id}": [
        Call(404, "WEBHOOK_ENDPOINT_NOT_FOUND", _ENDPOINT_GONE, path=_endpoint)
    ],
    "PATCH /api/v1/webhook-endpoints/{endpoint_id}": [
        Call(404, "WEBHOOK_ENDPOINT_NOT_FOUND", _ENDPOINT_GONE, path=_endpoint, body=lambda w: {"enabled": False})
    ],
    "DELETE /api/v1/webhook-endpoints/{endpoint_id}": [
        Call(404, "WEBHOOK_ENDPOINT_NOT_FOUND", _ENDPOINT_GONE, path=_endpoint)
    ],
    "POST /api/v1/webhook-endpoints/{endpoint_id}/rotate-secret": [
        Call(404, "WEBHOOK_ENDPOINT_NOT_FOUND", _ENDPOINT_GONE, path=_endpoint)
    ],
    "POST /api/v1/webhook-endpoints/{endpoint_id}/test": [
        Call(404, "WEBHOOK_ENDPOINT_NOT_FOUND", _ENDPOINT_GONE, path=_endpoint)
    ],
    "GET /api/v1/webhook-endpoints/{endpoint_id}/deliveries": [
        Call(404, "WEBHOOK_ENDPOINT_NOT_FOUND", _ENDPOINT_GONE, path=_endpoint)
    ],
}

_MAILING_GONE = (404, "MAILING_NOT_FOUND", "another vendor's mailing: 404 MAILING_NOT_FOUND")
CASES |= {
    "POST /admin/v1/vendors/{vendor_id}/mailings": [
        Call(
            403,
            "PLAN_FEATURE_UNAVAILABLE",
            "the intruder's plan lacks campaign_mail; nothing is made",
            path=_intruder_vendor,
            body=lambda w: {"subject": "m", "body": "m"},
            token="admin",
        )
    ],
    "GET /admin/v1/vendors/{vendor_id}/mailings": [
        Call(200, None, "lists the path vendor's own mailings", path=_intruder_vendor, token="admin")
    ],
    "GET /admin/v1/vendors/{vendor_id}/mailings/{mailing_id}": [
        Call(*_MAILING_GONE, path=_owners_in_intruders_vendor("mailing_id", "mailing_id"), token="admin")
    ],
    "PATCH /admin/v1/vendors/{vendor_id}/mailings/{mailing_id}": [
        Call(
            *_MAILING_GONE,
            path=_owners_in_intruders_vendor("mailing_id", "mailing_id"),
            body=lambda w: {"subject": "x"},
            token="admin",
        )
    ],
    "POST /admin/v1/vendors/{vendor_id}/mailings/{mailing_id}/test": [
        Call(
            *_MAILING_GONE,
            path=_owners_in_intruders_vendor("mailing_id", "mailing_id"),
            body=lambda w: {"email": "intruder@example.com"},
            token="admin",
        )
    ],
    "POST /admin/v1/vendors/{vendor_id}/mailings/{mailing_id}/send": [
        Call(
            *_MAILING_GONE,
            path=_owners_in_intruders_vendor("mailing_id", "mailing_id"),
            body=lambda w: {},
            token="admin",
        )
    ],
    "POST /admin/v1/vendors/{vendor_id}/mailings/{mailing_id}/cancel": [
        Call(*_MAILING_GONE, path=_owners_in_intruders_vendor("mailing_id", "mailing_id"), token="admin")
    ],
}

NOT_SWEPT: dict[str, str] = {
    "POST /admin/v1/plans": PLATFORM,
    "GET /admin/v1/plans": PLATFORM,
    "GET /admin/v1/plans/{plan_id}": PLATFORM,
    "PATCH /admin/v1/plans/{plan_id}": PLATFORM,
    "GET /admin/v1/vendors": PLATFORM,
    "GET /admin/v1/vendors/{vendor_id}": PLATFORM,
    "GET /admin/v1/clients/{client_id}": PLATFORM,
    "GET /admin/v1/email-suppressions": "the suppression list is global across shops: it names no vendor",
    "POST /admin/v1/vendors": PLATFORM,
    "PATCH /admin/v1/vendors/{vendor_id}": PLATFORM,
    "POST /admin/v1/vendors/{vendor_id}/clients": PLATFORM,
    "POST /admin/v1/vendors/{vendor_id}/branches": PLATFORM + "; it takes no id of an existing row",
    "POST /admin/v1/clients": PLATFORM,
    "PATCH /admin/v1/clients/{client_id}": PLATFORM,
    "DELETE /admin/v1/clients/{client_id}": PLATFORM,
    "POST /admin/v1/vendors/{vendor_id}/card-batches": "makes new codes for the vendor in the path; takes no id",
    "POST /admin/v1/vendors/{vendor_id}/customers/import": (
        "creates the path vendor's own customers and takes no id of an existing row; per-vendor uniqueness "
        "of external ids and emails is swept through POST /api/v1/customers"
    ),
    **{
        f"{verb} /admin/v1/vendors/{{vendor_id}}/users{tail}": (
            "portal users: another vendor's user id answers USER_NOT_FOUND in tests/http/admin/test_users.py, "
            "which makes the one user it needs (an argon2id hash in every world here would slow each case)"
        )
        for verb, tail in (("POST", ""), ("GET", ""), ("PATCH", "/{user_id}"))
    },
    "GET /admin/v1/test-clock": "test mode: one clock for the whole service",
    "PUT /admin/v1/test-clock": "test mode: one clock for the whole service",
    "DELETE /admin/v1/test-clock": "test mode: one clock for the whole service",
    "POST /admin/v1/jobs/{name}/run": "test mode: jobs run over every vendor",
    "GET /metrics": "operator's counters by route template: no vendor, no row, no id",
    **{
        f"{verb} /admin/v1/vendors/{{vendor_id}}/{what}": OWN_IDENTITY
        for verb, what in (
            ("GET", "wallet-identity"),
            ("PUT", "wallet-identity"),
            ("POST", "wallet-identity/retry"),
            ("GET", "pass-branding"),
            ("PUT", "pass-branding"),
            ("PUT", "wallet-identity/certificate"),
        )
    },
    "POST /admin/v1/email-suppressions": "the bounce feed is global across shops: it names no vendor and no row",
    "GET /admin/v1/outbox": "test mode: one outbox for the whole service",
    "GET /admin/v1/test/wallet-pushes": "test mode: one push stand-in for the whole service",
    "POST /admin/v1/test/wallet-push-outcome": "test mode: one push stand-in for the whole service",
    **{
        f"{method} /passes/platform_a/v1/{path}": (
            "no bearer token: a pass's own token (PASS-10); another shop's pass's token opening nothing is "
            "tests/api/passes/test_pass_web_service.py::test_unauthorised_and_unknown_requests"
        )
        for method, path in (
            ("POST", "devices/{device}/registrations/{pass_type}/{serial}"),
            ("DELETE", "devices/{device}/registrations/{pass_type}/{serial}"),
            ("GET", "devices/{device}/registrations/{pass_type}"),
            ("GET", "passes/{pass_type}/{serial}"),
            ("POST", "log"),
        )
    },
    "GET /admin/v1/outbox/{message_id}/raw": "test mode: one outbox for the whole service",
    "POST /unsubscribe/{token}": "no bearer token: the signed token in the path is the customer's own key",
    "GET /health/live": "no tenant data",
    "GET /health/ready": "no tenant data",
    "GET /unsubscribe/{token}": "no bearer token: the signed token in the path is the customer's own key",
    "GET /api/v1/probe/boom": "test-only probe controller, not part of the service",
    "GET /api/v1/probe/db-boom": "test-only probe controller, not part of the service",
    "GET /api/v1/probe/sqlstate/{code}": "test-only probe controller, not part of the service",
    "POST /api/v1/probe/echo": "test-only probe controller, not part of the service",
    "GET /api/v1/probe/items": "test-only probe controller, not part of the service",
    "GET /api/v1/probe/missing": "test-only probe controller, not part of the service",
    "GET /api/v1/probe/things/{thing_id}": "test-only probe controller, not part of the service",
    "GET /api/v1/probe/vendor": "test-only probe controller, not part of the service",
    "POST /api/v1/probe/vendor": "test-only probe controller, not part of the service",
    **{
        f"GET {page}": "the OpenAPI documents and their Swagger UI pages hold no tenant data"
        for page in (
            "/api/v1/openapi.json",
            "/api/v1/docs",
            "/api/v1/docs/swagger-ui-bundle.js",
            "/api/v1/docs/swagger-ui.css",
            "/admin/v1/openapi.json",
            "/admin/v1/docs",
        )
    },
}

SWEEP = [
    pytest.param(key, call, id=f"{key}#{n}")
    for key, calls in CASES.items()
    for n, call in zip(itertools.count(1), calls, strict=False)
]


def test_every_route_is_swept_or_says_why_not(app: Litestar) -> None:
    """A route the sweep does not know fails here: add its cases to ``CASES`` or its reason to
    ``NOT_SWEPT``; a listed route that no longer exists fails too."""
    registered = {e.key for e in endpoints(app)}
    assert set(CASES) & set(NOT_SWEPT) == set()
    assert registered - set(CASES) - set(NOT_SWEPT) == set(), "routes neither swept nor excused"
    assert (set(CASES) | set(NOT_SWEPT)) - registered == set(), "listed routes the app does not have"


def test_every_vendor_route_is_swept(app: Litestar) -> None:
    """TENANCY-1: every route a vendor token reaches is scoped to its vendor, so none may be excused."""
    vendor_routes = {e.key for e in endpoints(app) if e.auth == "vendor" and "/probe/" not in e.path}
    assert vendor_routes - set(CASES) == set()


@pytest.fixture
async def owner_world(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> dict[str, Any]:
    """The owner vendor with one of everything the routes take an id of (made afresh for each
    case, so no case can see what another one wrote)."""
    features = {"campaigns": True, "tiers": True, "referrals": True, "campaign_mail": True}
    owner = await make_tenant(client, plan={"features": features})
    free_card, _ = await card_batch(client, owner, 2)
    made = await register(
        client,
        owner,
        external_id="OWN-1",
        email="ownerina@example.nl",
        first_name=SECRET,
        last_name=SECRET,
    )
    second = await register(client, owner, first_name=SECRET)
    adjusted = await client.post(
        f"{CUSTOMERS}/{made['id']}/wallet/adjust",
        json={"amount": 50, "reason": SECRET, "idempotency_key": "k"},
        headers=owner.headers,
    )
    assert adjusted.status_code == 201, adjusted.text
    for external_id in ("OWN-P", "batch"):
        await create(client, owner, external_id, SECRET, description=SECRET)
    reward = await client.post(
        f"{PRODUCTS}/OWN-P/reward", json={"point_cost": 10, "name": SECRET}, headers=owner.headers
    )
    assert reward.status_code == 201, reward.text
    await admin(client, "POST", portal(owner, "/branches"), {"external_id": "OWN-B", "name": SECRET})
    redeemed = await client.post(
        "/api/v1/redemptions",
        json={"identifier": "ownerina@example.nl", "reward_id": reward.json()["data"]["id"], "idempotency_key": "r"},
        headers=owner.headers,
    )
    assert redeemed.status_code == 201, redeemed.text
    voucher = await admin(
        client,
        "POST",
        portal(owner, "/vouchers"),
        {"customer_id": made["id"], "discount_type": "percentage", "discount_value": 5, "description": SECRET},
    )
    rule = await admin(
        client, "POST", portal(owner, "/earn-rules"), {"name": SECRET, "points_per_unit": 1, "unit_amount": 100}
    )
    campaign = await admin(
        client, "POST", portal(owner, "/campaigns"), {"name": SECRET, "kind": "fixed_points", "points": 5}
    )
    await admin(
        client,
        "PUT",
        portal(owner, "/tiers"),
        {"basis": "spend", "tiers": [{"key": "own", "name": SECRET, "threshold": 0, "multiplier_percent": 100}]},
    )
    await admin(client, "PUT", portal(owner, "/referral-programme"), {"referrer_points": 7, "referee_points": 9})
    mailing = await admin(client, "POST", portal(owner, "/mailings"), {"subject": SECRET, "body": SECRET})
    bought = await client.post(
        "/api/v1/transactions",
        json={"identifier": "ownerina@example.nl", "idempotency_key": "t", "total_amount": 900, "description": SECRET},
        headers=owner.headers,
    )
    assert bought.status_code == 201, bought.text
    returned = await client.post(
        f"/api/v1/transactions/{bought.json()['data']['id']}/returns",
        json={"idempotency_key": "rt", "amount": 100, "reason": SECRET},
        headers=owner.headers,
    )
    assert returned.status_code == 201, returned.text
    hooks = await add_client(client, owner.vendor_id, owner.plan_id, ALL_SCOPES)
    endpoint = await make_endpoint(client, hooks, description=SECRET)
    async with AsyncSession(engine) as session, session.begin():
        event_id = await record_event(
            session, SystemClock(), owner.vendor_id, stand_in("customer.updated", note=SECRET), customer_id=made["id"]
        )
    return {
        "owner": owner,
        "endpoint_id": endpoint["id"],
        "event_id": event_id,
        "transaction_id": bought.json()["data"]["id"],
        "earn_rule_id": rule["id"],
        "campaign_id": campaign["id"],
        "mailing_id": mailing["id"],
        "customer_id": made["id"],
        "second_customer_id": second["id"],
        "external_id": "OWN-1",
        "email": "ownerina@example.nl",
        "card": made["loyalty_card_code"],
        "free_card": free_card,
        "product": "OWN-P",
        "reward_id": reward.json()["data"]["id"],
        "branch": "OWN-B",
        "code": redeemed.json()["data"]["confirmation_code"],
        "voucher": voucher["code"],
    }


async def owner_rows(engine: AsyncEngine, vendor_id: int) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the owner in every table that holds a vendor's rows, and its vendor row."""
    tables: list[Table] = [t for t in metadata.sorted_tables if "vendor_id" in t.c or t.name == "vendors"]
    rows: dict[str, list[tuple[Any, ...]]] = {}
    async with engine.connect() as conn:
        for table in tables:
            own = table.c.vendor_id == vendor_id if "vendor_id" in table.c else table.c.id == vendor_id
            query = select(table).where(own).order_by(*table.primary_key.columns)
            rows[table.name] = [tuple(r) for r in (await conn.execute(query)).all()]
    return rows


@pytest.mark.parametrize(("key", "call"), SWEEP)
async def test_another_vendor_gets_the_routes_answer_and_none_of_the_owners_data(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, owner_world: dict[str, Any], key: str, call: Call
) -> None:
    """TENANCY-2 and each route's not-found rule: the intruder's request answers the status
    and code of ``call``, carries none of the owner's data, and leaves every owner row as it was."""
    intruder = await make_tenant(client, credentials=ALL_SCOPES)
    world = World(intruder=intruder, **owner_world)
    method = key.split(" ", 1)[0]
    [endpoint] = [e for e in endpoints(client.app) if e.key == key]
    url = endpoint.url(**call.path(world))
    headers = {"none": {}, "admin": ADMIN, "intruder": intruder.headers}[call.token]
    before = await owner_rows(engine, world.owner.vendor_id)

    response = await client.request(
        method,
        url,
        json=call.body(world) if call.body else None,
        data=call.form(world) if call.form else None,
        params=call.query(world) if call.query else None,
        headers=headers,
    )

    assert response.status_code == call.status, response.text
    if call.code is not None:
        assert error_of(response)["code"] == call.code
    assert SECRET not in response.text
    assert await owner_rows(engine, world.owner.vendor_id) == before


async def test_admin_routes_refuse_a_vendor_token(client: AsyncTestClient[Litestar]) -> None:
    """AUTH-9: the admin API takes only the admin token; a vendor's token answers 401
    UNAUTHENTICATED on every admin route, whatever ids it names."""
    intruder = await make_tenant(client)
    for endpoint in endpoints(client.app):
        if endpoint.audience != "admin" or endpoint.auth == "none":
            continue  # the admin docs page is an HTML shell that asks for the token itself
        url = endpoint.url(**dict.fromkeys(endpoint.params, "1"))
        response = await client.request(endpoint.method, url, json={}, headers=intruder.headers)
        assert response.status_code == 401, endpoint.key
        assert error_of(response)["code"] == "UNAUTHENTICATED", endpoint.key
