"""The portal's tenant sweep as its tests share it: one route of the portal per key (``CASES``),
each with the status another shop's user gets and how to reach the owner's row from a ``World``, the
owner's shop that ``owner_world`` fills with a row of every kind, its text ``SECRET`` so a page that
leaked it would show."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.customers.models import CardBatch
from tests.support.customers import register
from tests.support.portal import Shop
from tests.support.tenants import admin

SECRET = "Zebulon-Quartz"
_n = itertools.count()


@dataclass(frozen=True)
class World:
    customer_id: int
    card: str
    reward_id: int
    code: str
    email: str
    rule_id: int = 1
    campaign_id: int = 1
    branch: str = "B-1"
    client_id: str = "cl_x"
    user_id: int = 1
    batch_id: int = 0
    mailing_id: int = 1


@dataclass(frozen=True)
class Case:
    status: int
    path: Callable[[World], str]
    form: Callable[[World], dict[str, str]] = lambda w: {}


def _customer(w: World) -> str:
    return f"/portal/customers/{w.customer_id}"


def _reward(w: World) -> str:
    return f"/portal/rewards/{w.reward_id}"


def _redemption(w: World) -> str:
    return f"/portal/redemptions/{w.code}"


def _batch(w: World) -> str:
    return f"/portal/cards/{w.batch_id}"


LISTS_OWN = 200  # a list of the intruder's own shop: it holds none of the owner's rows
RULE = {"version": "1", "name": "own", "points_per_unit": "1", "unit_amount": "100"}
CAMPAIGN = {"version": "1", "name": "own", "kind": "fixed_points", "points": "5"}
MAILING = {"subject": "own", "body": "own"}
PROGRAMME = {"referrer_points": "5", "referee_points": "5", "min_purchase_amount": "1.00", "active": "on"}
OWN_PROGRAMME = {"referrer_points": 731, "referee_points": 373, "min_purchase_amount": 91_919}
"""The owner's programme: figures no intruder's page shows."""
LADDER = {
    "basis": "spend",
    "period_months": "12",
    "grace_months": "0",
    "rows": "1",
    "key_1": "own",
    "name_1": "Own",
    "threshold_1": "0",
    "multiplier_percent_1": "100",
}
SETTINGS_CASES: dict[str, Case] = {
    "GET /earn-rules": Case(LISTS_OWN, lambda w: "/portal/earn-rules?preview=1&sku_1=A&amount_1=500"),
    "GET /earn-rules/new": Case(200, lambda w: "/portal/earn-rules/new"),
    "POST /earn-rules": Case(303, lambda w: "/portal/earn-rules", lambda w: RULE),
    "GET /earn-rules/{row_id}": Case(404, lambda w: f"/portal/earn-rules/{w.rule_id}"),
    "POST /earn-rules/{row_id}": Case(404, lambda w: f"/portal/earn-rules/{w.rule_id}", lambda w: RULE),
    "GET /earn-rules/{row_id}/delete": Case(404, lambda w: f"/portal/earn-rules/{w.rule_id}/delete"),
    "POST /earn-rules/{row_id}/delete": Case(404, lambda w: f"/portal/earn-rules/{w.rule_id}/delete"),
    "GET /campaigns": Case(LISTS_OWN, lambda w: "/portal/campaigns?preview=1&sku_1=A&amount_1=500"),
    "GET /campaigns/new": Case(200, lambda w: "/portal/campaigns/new"),
    # the intruder's plan has no campaigns: refused on its own shop with the API's status for
    # PLAN_FEATURE_UNAVAILABLE (PORTAL-1), nothing of the owner's touched
    "POST /campaigns": Case(403, lambda w: "/portal/campaigns", lambda w: CAMPAIGN),
    "GET /campaigns/{row_id}": Case(404, lambda w: f"/portal/campaigns/{w.campaign_id}"),
    # the ladder is the shop's own: the intruder sees and previews its own (none), and its plan has
    # no tiers, so its save is refused with PLAN_FEATURE_UNAVAILABLE's status (TIER-14)
    "GET /tiers": Case(200, lambda w: "/portal/tiers"),
    "POST /tiers/rows": Case(200, lambda w: "/portal/tiers/rows", lambda w: LADDER),
    "POST /tiers": Case(403, lambda w: "/portal/tiers", lambda w: LADDER),
    # the programme is the shop's own: the intruder sees its own form (none stored), and its plan has
    # no referrals, so its save is refused with PLAN_FEATURE_UNAVAILABLE's status (REFERRAL-5)
    "GET /referrals": Case(200, lambda w: "/portal/referrals"),
    "POST /referrals": Case(403, lambda w: "/portal/referrals", lambda w: PROGRAMME),
    "POST /campaigns/{row_id}": Case(404, lambda w: f"/portal/campaigns/{w.campaign_id}", lambda w: CAMPAIGN),
    "GET /campaigns/{row_id}/delete": Case(404, lambda w: f"/portal/campaigns/{w.campaign_id}/delete"),
    "POST /campaigns/{row_id}/delete": Case(404, lambda w: f"/portal/campaigns/{w.campaign_id}/delete"),
    "GET /mailings": Case(LISTS_OWN, lambda w: "/portal/mailings"),
    "GET /mailings/new": Case(200, lambda w: "/portal/mailings/new"),
    # the intruder's plan has no campaign_mail: 403 PLAN_FEATURE_UNAVAILABLE on its own shop (MAIL-13)
    "POST /mailings": Case(403, lambda w: "/portal/mailings", lambda w: MAILING),
    "GET /mailings/{mailing_id}": Case(404, lambda w: f"/portal/mailings/{w.mailing_id}"),
    "POST /mailings/{mailing_id}": Case(404, lambda w: f"/portal/mailings/{w.mailing_id}", lambda w: MAILING),
    "POST /mailings/{mailing_id}/test": Case(404, lambda w: f"/portal/mailings/{w.mailing_id}/test"),
    "POST /mailings/{mailing_id}/send": Case(404, lambda w: f"/portal/mailings/{w.mailing_id}/send"),
    "POST /mailings/{mailing_id}/cancel": Case(404, lambda w: f"/portal/mailings/{w.mailing_id}/cancel"),
    "GET /branches": Case(LISTS_OWN, lambda w: "/portal/branches"),
    "GET /branches/new": Case(200, lambda w: "/portal/branches/new"),
    "POST /branches": Case(303, lambda w: "/portal/branches", lambda w: {"external_id": "own", "name": "Own"}),
    "GET /branches/{external_id}": Case(404, lambda w: f"/portal/branches/{w.branch}"),
    "POST /branches/{external_id}": Case(404, lambda w: f"/portal/branches/{w.branch}", lambda w: {"name": "x"}),
    "POST /branches/{external_id}/deactivate": Case(404, lambda w: f"/portal/branches/{w.branch}/deactivate"),
    "POST /branches/{external_id}/activate": Case(404, lambda w: f"/portal/branches/{w.branch}/activate"),
    "GET /clients": Case(LISTS_OWN, lambda w: "/portal/clients?page=1"),
    "GET /clients/new": Case(200, lambda w: "/portal/clients/new"),
    "POST /clients": Case(201, lambda w: "/portal/clients", lambda w: {"name": "own", "scope_read": "on"}),
    "GET /clients/{client_id}/revoke": Case(404, lambda w: f"/portal/clients/{w.client_id}/revoke"),
    "POST /clients/{client_id}/revoke": Case(404, lambda w: f"/portal/clients/{w.client_id}/revoke"),
    "GET /users": Case(LISTS_OWN, lambda w: "/portal/users?page=1"),
    "GET /users/new": Case(200, lambda w: "/portal/users/new"),
    "POST /users": Case(
        303,
        lambda w: "/portal/users",
        lambda w: {"email": f"x{w.user_id}@own.example", "role": "staff"},
    ),
    "GET /users/{user_id}": Case(404, lambda w: f"/portal/users/{w.user_id}"),
    "POST /users/{user_id}/role": Case(404, lambda w: f"/portal/users/{w.user_id}/role", lambda w: {"role": "staff"}),
    "POST /users/{user_id}/password": Case(404, lambda w: f"/portal/users/{w.user_id}/password"),
    "POST /users/{user_id}/deactivate": Case(404, lambda w: f"/portal/users/{w.user_id}/deactivate"),
    "POST /users/{user_id}/activate": Case(404, lambda w: f"/portal/users/{w.user_id}/activate"),
}
CASES: dict[str, Case] = {
    "GET /customers": Case(LISTS_OWN, lambda w: f"/portal/customers?q={w.card}&status=active&sort=balance"),
    "GET /customers/{customer_id}": Case(
        404, lambda w: f"{_customer(w)}?ledger_page=2&purchases_page=2&referrals_page=2"
    ),
    "POST /customers/{customer_id}/adjust": Case(
        404, lambda w: f"{_customer(w)}/adjust", lambda w: {"amount": "-5", "reason": "x"}
    ),
    "POST /customers/{customer_id}/cards/{action}": Case(
        404, lambda w: f"{_customer(w)}/cards/block", lambda w: {"card": w.card}
    ),
    "POST /customers/{customer_id}/deactivate": Case(404, lambda w: f"{_customer(w)}/deactivate"),
    "GET /customers/{customer_id}/anonymize": Case(404, lambda w: f"{_customer(w)}/anonymize"),
    "POST /customers/{customer_id}/anonymize": Case(404, lambda w: f"{_customer(w)}/anonymize"),
    "POST /customers/{customer_id}/send-card": Case(404, lambda w: f"{_customer(w)}/send-card"),
    "POST /customers/{customer_id}/consent": Case(
        404, lambda w: f"{_customer(w)}/consent", lambda w: {"marketing_consent": "yes", "statement_version": "v1"}
    ),
    "POST /customers/{customer_id}/merge/preview": Case(
        404, lambda w: f"{_customer(w)}/merge/preview", lambda w: {"keep": w.card}
    ),
    "POST /customers/{customer_id}/merge": Case(404, lambda w: f"{_customer(w)}/merge", lambda w: {"keep": w.card}),
    "GET /customers/{customer_id}/edit": Case(404, lambda w: f"{_customer(w)}/edit"),
    "POST /customers/{customer_id}/edit": Case(
        404, lambda w: f"{_customer(w)}/edit", lambda w: {"first_name": "x", "locale": "en"}
    ),
    "GET /rewards": Case(LISTS_OWN, lambda w: "/portal/rewards?status=active&sort=name"),
    "GET /rewards/new": Case(200, lambda w: "/portal/rewards/new"),
    "POST /rewards": Case(
        303, lambda w: "/portal/rewards", lambda w: {"name": "own", "type": "free_product", "point_cost": "3"}
    ),
    "GET /rewards/{reward_id}": Case(404, _reward),
    "POST /rewards/{reward_id}": Case(404, _reward, lambda w: {"name": "x", "type": "free_product", "point_cost": "1"}),
    "GET /rewards/{reward_id}/delete": Case(404, lambda w: f"{_reward(w)}/delete"),
    "POST /rewards/{reward_id}/delete": Case(404, lambda w: f"{_reward(w)}/delete"),
    "POST /rewards/{reward_id}/give": Case(
        404, lambda w: f"{_reward(w)}/give", lambda w: {"customer": str(w.customer_id)}
    ),
    # the list of the intruder's own redemptions, filtered: none of the owner's rows; a code typed
    # in opens its page, which answers 404 (GET /redemptions/{code})
    "GET /redemptions": Case(LISTS_OWN, lambda w: "/portal/redemptions?status=valid&branch=B-1&sort=oldest"),
    "GET /redemptions/{code}": Case(404, _redemption),
    "GET /redemptions/{code}/cancel": Case(404, lambda w: f"{_redemption(w)}/cancel"),
    "POST /redemptions/{code}/cancel": Case(404, lambda w: f"{_redemption(w)}/cancel"),
    **SETTINGS_CASES,
    "GET /cards": Case(LISTS_OWN, lambda w: "/portal/cards?page=1"),
    "POST /cards": Case(303, lambda w: "/portal/cards", lambda w: {"count": "1"}),
    "GET /cards/{batch_id}": Case(404, _batch),
    "GET /cards/{batch_id}/pdf": Case(404, lambda w: f"{_batch(w)}/pdf"),
    "GET /cards/{batch_id}/csv": Case(404, lambda w: f"{_batch(w)}/csv"),
    "GET /mail": Case(LISTS_OWN, lambda w: "/portal/mail"),
    "GET /": Case(LISTS_OWN, lambda w: "/portal"),
    "POST /mail/switch-on": Case(404, lambda w: "/portal/mail/switch-on", lambda w: {"email": w.email}),
    "GET /billing": Case(LISTS_OWN, lambda w: "/portal/billing"),
    "POST /billing/plan": Case(422, lambda w: "/portal/billing/plan", lambda w: {"plan_id": "0"}),
    "POST /billing/point-value": Case(
        303, lambda w: "/portal/billing/point-value", lambda w: {"point_value_millicents": "5"}
    ),
    "GET /reports": Case(LISTS_OWN, lambda w: "/portal/reports"),
    "GET /reports/liability.csv": Case(LISTS_OWN, lambda w: "/portal/reports/liability.csv"),
    "POST /billing/pending": Case(422, lambda w: "/portal/billing/pending", lambda w: {"pending_days": "91"}),
    "GET /branding": Case(LISTS_OWN, lambda w: "/portal/branding"),
    "POST /branding": Case(
        303,
        lambda w: "/portal/branding",
        lambda w: {"background": "#000000", "foreground": "#ffffff", "label": "#888888"},
    ),
    "GET /export": Case(LISTS_OWN, lambda w: "/portal/export"),
    "GET /export/customers.csv": Case(LISTS_OWN, lambda w: "/portal/export/customers.csv"),
    "GET /export/ledger.csv": Case(LISTS_OWN, lambda w: "/portal/export/ledger.csv"),
    "GET /import": Case(LISTS_OWN, lambda w: "/portal/import"),
    "GET /activity": Case(LISTS_OWN, lambda w: "/portal/activity"),
    # the logo of the visitor's own shop, which has none: the owner's logo is never reachable
    "GET /logo.png": Case(404, lambda w: "/portal/logo.png"),
    # a form that is no file upload: refused before anything is read or stored
    "POST /import": Case(400, lambda w: "/portal/import"),
    # an import job of another shop: tests/portal/test_import_pages.py makes one to ask for
    "GET /import/{job_id}": Case(404, lambda w: f"/portal/import/{w.customer_id}"),
    "POST /import/{job_id}/run": Case(404, lambda w: f"/portal/import/{w.customer_id}/run"),
    # the signed-in user's own second factor: no id in the path, nothing of a shop's
    "GET /account/two-factor": Case(200, lambda w: "/portal/account/two-factor"),
    "POST /account/two-factor/setup": Case(303, lambda w: "/portal/account/two-factor/setup"),
    "POST /account/two-factor/confirm": Case(
        422, lambda w: "/portal/account/two-factor/confirm", lambda w: {"code": "1"}
    ),
    # turning off a second factor the visitor never turned on
    "POST /account/two-factor/off": Case(
        422, lambda w: "/portal/account/two-factor/off", lambda w: {"password": "not the password", "code": "1"}
    ),
}


async def owner_world(client: AsyncTestClient[Litestar], engine: AsyncEngine, shop: Shop) -> World:
    tenant = shop.tenant
    email = f"customer{next(_n)}@secret.example"
    made = await register(client, tenant, email=email, first_name=SECRET, last_name=SECRET)
    adjusted = await client.post(
        f"/api/v1/customers/{made['id']}/wallet/adjust",
        json={"amount": 100, "reason": SECRET, "idempotency_key": "k"},
        headers=tenant.headers,
    )
    assert adjusted.status_code == 201, adjusted.text
    reward = await admin(
        client,
        "POST",
        f"/admin/v1/vendors/{tenant.vendor_id}/rewards",
        {"type": "free_product", "name": SECRET, "point_cost": 10},
    )
    redeemed = await client.post(
        "/api/v1/redemptions",
        json={"identifier": email, "reward_id": reward["id"], "idempotency_key": "r"},
        headers=tenant.headers,
    )
    assert redeemed.status_code == 201, redeemed.text
    await admin(client, "POST", "/admin/v1/email-suppressions", {"email": email, "reason": "bounce"})
    v = f"/admin/v1/vendors/{tenant.vendor_id}"
    await admin(
        client,
        "PATCH",
        f"/admin/v1/plans/{tenant.plan_id}",
        {"features": {"campaigns": True, "campaign_mail": True, "referrals": True}},
    )
    await admin(client, "PUT", f"/admin/v1/vendors/{tenant.vendor_id}/referral-programme", OWN_PROGRAMME)
    mailing = await admin(client, "POST", f"{v}/mailings", {"subject": SECRET, "body": SECRET})
    rule = await admin(client, "POST", f"{v}/earn-rules", {"name": SECRET, "points_per_unit": 1, "unit_amount": 100})
    campaign = await admin(client, "POST", f"{v}/campaigns", {"name": SECRET, "kind": "fixed_points", "points": 5})
    await admin(client, "POST", f"{v}/branches", {"external_id": "B-1", "name": SECRET})
    till = await admin(client, "POST", f"{v}/clients", {"name": SECRET, "default_branch": "B-1"})
    await admin(client, "POST", f"{v}/card-batches", {"count": 2})
    async with engine.connect() as conn:
        batch_id = await conn.scalar(select(CardBatch.id).where(CardBatch.vendor_id == tenant.vendor_id))
    assert batch_id is not None
    return World(
        made["id"],
        made["loyalty_card_code"],
        reward["id"],
        redeemed.json()["data"]["confirmation_code"],
        email,
        rule["id"],
        campaign["id"],
        "B-1",
        till["client_id"],
        shop.owner_id,
        batch_id,
        mailing["id"],
    )
