"""The client against the real service: each error class the API can raise through the client,
raised by its real error with the envelope's code, status and request id (CLIENT-4)."""

from __future__ import annotations

import re
from collections.abc import Awaitable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from loyalty_client import LoyaltyError
from loyalty_client import error_codes as e
from loyalty_client.models import (
    CustomerCreate,
    CustomerUpdate,
    IdentifierIn,
    LinkExternalId,
    ProductBatch,
    ProductCreate,
    ProductReplace,
    RedeemBody,
    TransactionBody,
    WalletAdjust,
)
from loyalty_core.db import make_engine
from tests.support.ladders import TIERS_PLAN, put_ladder
from tests.support.loyalty_client import Recording, connect
from tests.support.tenants import Tenant, admin, make_tenant
from tests.support.webhooks import webhook_tenant

Client = AsyncTestClient[Litestar]

NOT_THROUGH_THE_CLIENT = {
    "INVALID_JSON": "the client always sends the JSON msgspec encodes",
    "UNSUPPORTED_MEDIA_TYPE": "the client always sends application/json",
    "UNAUTHENTICATED": "the client answers it with a fresh token (tests/client/test_tokens.py)",
    "VENDOR_CONTEXT_MISSING": "every token the service issues names a vendor",
    "VENDOR_CONTEXT_REQUIRED": "every token the service issues names a vendor",
    "INTERNAL_ERROR": "no input produces it",
    "SERVICE_UNAVAILABLE": "needs a dependency down (tests/deployment)",
    "VERIFICATION_FAILED": "the service answers the other verify codes first for every code a till holds",
    "CUSTOMER_DEACTIVATED": "needs a merge from the admin portal (tests/api merges)",
    "REWARD_NOT_FOUND": "the public routes answer an unknown reward with REWARD_UNAVAILABLE",
    "NO_WALLET": "a customer registered through the API has a wallet from the start",
    "WALLET_NOT_FOUND": "a customer registered through the API has a wallet from the start",
    "PLATFORM_A_WALLET_UNAVAILABLE": "needs the pass signer busy (tests/api/passes)",
}


async def raised(kind: type[LoyaltyError], call: Awaitable[Any]) -> LoyaltyError:
    """The call raises exactly ``kind``, carrying the envelope's fields."""
    with pytest.raises(kind) as caught:
        await call
    error = caught.value
    assert type(error) is kind
    assert error.code == kind.code
    assert error.status >= 400
    assert error.request_id
    return error


async def setup(client: Client, tenant: Tenant, path: str, body: dict[str, Any]) -> Any:
    return await admin(client, "POST", f"/admin/v1/vendors/{tenant.vendor_id}{path}", body)


async def test_a_reward_above_the_customer_tier(client: Client, database_url: str) -> None:
    """CLIENT-4, TIER-12: a Gold reward asked for by a Silver customer raises TierRequired."""
    tenant = await make_tenant(client, plan=TIERS_PLAN)
    engine = make_engine(database_url)
    try:
        await put_ladder(engine, tenant.vendor_id)
    finally:
        await engine.dispose()
    loyalty = connect(client, tenant)
    gold = await setup(
        client, tenant, "/rewards", {"type": "free_product", "name": "G", "point_cost": 1, "min_tier": "gold"}
    )
    ada = await loyalty.register_customer(CustomerCreate(email="ada@example.com"))
    await loyalty.adjust_wallet(ada.id, WalletAdjust(amount=10, reason="start"))
    await raised(
        e.TierRequired, loyalty.create_redemption(RedeemBody(identifier="ada@example.com", reward_id=gold["id"]))
    )


async def test_a_shop_without_a_ladder_has_no_tiers(client: Client) -> None:
    """CLIENT-4, TIER-7: the public ladder of a shop that has none raises NotFound."""
    loyalty = connect(client, await make_tenant(client, plan=TIERS_PLAN))
    missing = await raised(e.NotFound, loyalty.get_tiers())
    assert (missing.status, missing.details) == (404, {"resource": "tiers"})


async def test_customer_errors(client: Client) -> None:
    """CLIENT-4"""
    tenant = await make_tenant(client)
    loyalty = connect(client, tenant)
    ada = await loyalty.register_customer(CustomerCreate(email="ada@example.com", external_id="crm-1"))
    bare = await loyalty.register_customer(CustomerCreate(first_name="No mail"))

    invalid = await raised(e.ValidationError, loyalty.register_customer(CustomerCreate(email="not-an-address")))
    assert invalid.status == 422
    assert invalid.details == {"email": ["validation.email"]}
    await raised(e.ExternalIdDuplicate, loyalty.register_customer(CustomerCreate(external_id="crm-1")))
    await raised(e.IdentifierDuplicate, loyalty.register_customer(CustomerCreate(email="ada@example.com")))
    await raised(
        e.CustomerAlreadyLinked, loyalty.link_external_id(LinkExternalId(external_id="crm-2", customer_id=ada.id))
    )
    unknown_card = CustomerCreate(identifiers=[IdentifierIn(type="loyalty_card", value="ZZZZ9999")])
    await raised(e.LoyaltyCardNotFound, loyalty.register_customer(unknown_card))
    child = CustomerCreate(
        date_of_birth=date.today() - timedelta(days=5 * 365),
        marketing_consent=True,
        marketing_consent_statement_version="v1",
    )
    await raised(e.MarketingConsentUnderAge, loyalty.register_customer(child))
    missing = await raised(e.CustomerNotFound, loyalty.lookup_customer(identifier="nobody@example.com"))
    assert missing.status == 404
    await raised(e.ExternalIdNotFound, loyalty.update_customer_by_external_id("crm-9", CustomerUpdate(first_name="X")))
    await raised(e.CustomerHasNoEmail, loyalty.send_card(bare.id))
    await loyalty.send_card(ada.id)
    throttled = await raised(e.CardSendThrottled, loyalty.send_card(ada.id))
    assert throttled.retry_after is not None
    await admin(client, "POST", "/admin/v1/email-suppressions", {"email": "eve@example.com", "reason": "bounce"})
    eve = await loyalty.register_customer(CustomerCreate(email="eve@example.com"))
    await raised(e.CustomerEmailSuppressed, loyalty.send_card(eve.id))


async def test_catalogue_and_routing_errors(client: Client) -> None:
    """CLIENT-4: a ``/`` in a path value is sent escaped, so it reaches no product route."""
    loyalty = connect(client, await make_tenant(client))
    await loyalty.create_product(ProductCreate(external_id="SKU-1", name="Coffee"))
    duplicate = await raised(
        e.ProductExternalIdDuplicate, loyalty.create_product(ProductCreate(external_id="SKU-1", name="Tea"))
    )
    assert duplicate.status == 409
    await raised(e.ProductNotFound, loyalty.get_product("SKU-9"))
    many = ProductBatch(products=[ProductCreate(external_id=f"B-{i}", name="x") for i in range(101)])
    await raised(e.BatchTooLarge, loyalty.upsert_products(many))
    await raised(e.RouteNotFound, loyalty.get_product("A/B"))
    await raised(e.MethodNotAllowed, loyalty.replace_product("A/reward", ProductReplace(name="x")))
    large = ProductCreate(external_id="SKU-2", name="Big", description="x" * 1_100_000)
    assert (await raised(e.PayloadTooLarge, loyalty.create_product(large))).status == 413


async def test_not_found_errors_of_the_other_resources(client: Client) -> None:
    """CLIENT-4"""
    loyalty = connect(client, await webhook_tenant(client))
    await raised(e.TransactionNotFound, loyalty.get_transaction(999_999_999))
    await raised(e.RedemptionNotFound, loyalty.get_redemption("RDM-NONE"))
    await raised(e.VoucherNotFound, loyalty.get_voucher("BON-NONE"))
    await raised(e.EventNotFound, loyalty.get_event("evt_000000000000000000000000"))
    await raised(e.WebhookEndpointNotFound, loyalty.get_webhook_endpoint(999_999_999))
    await raised(e.CustomerNotFound, loyalty.get_wallet(999_999_999))


async def test_money_errors(client: Client) -> None:
    """CLIENT-4: purchases, redemptions, codes and vouchers refused for their reasons."""
    tenant = await make_tenant(client, plan={"max_transactions": 3, "overage_percent": 0})
    loyalty = connect(client, tenant)
    await setup(client, tenant, "/earn-rules", {"name": "Euro", "points_per_unit": 1, "unit_amount": 100})
    await setup(client, tenant, "/branches", {"external_id": "closed", "name": "Closed"})
    await setup(client, tenant, "/branches", {"external_id": "north", "name": "North"})
    north = {"type": "free_product", "name": "North only", "point_cost": 10, "branches": ["north"]}
    north_only = await setup(client, tenant, "/rewards", north)
    await admin(client, "PATCH", f"/admin/v1/vendors/{tenant.vendor_id}/branches/closed", {"active": False})
    one = {"type": "free_product", "name": "One", "point_cost": 10, "code_valid_for_hours": 1}
    one = await setup(client, tenant, "/rewards", one)
    once = {"type": "free_product", "name": "Once", "point_cost": 10, "max_redemptions_per_customer": 1}
    limited = await setup(client, tenant, "/rewards", once)
    last = await setup(
        client, tenant, "/rewards", {"type": "free_product", "name": "Last", "point_cost": 10, "total_stock": 1}
    )
    off = await setup(
        client, tenant, "/rewards", {"type": "free_product", "name": "Off", "point_cost": 10, "status": "inactive"}
    )
    ada = await loyalty.register_customer(CustomerCreate(email="ada@example.com"))
    bob = await loyalty.register_customer(CustomerCreate(email="bob@example.com"))
    await loyalty.adjust_wallet(ada.id, WalletAdjust(amount=100, reason="start"))
    await loyalty.adjust_wallet(bob.id, WalletAdjust(amount=100, reason="start"))

    await raised(e.InsufficientBalance, loyalty.adjust_wallet(ada.id, WalletAdjust(amount=-1000, reason="too much")))
    await raised(
        e.BranchNotFound,
        loyalty.create_transaction(TransactionBody(identifier=ada.email or "", total_amount=100, branch="nowhere")),
    )
    await raised(
        e.BranchInactive,
        loyalty.create_transaction(TransactionBody(identifier=ada.email or "", total_amount=100, branch="closed")),
    )
    await loyalty.create_transaction(
        TransactionBody(identifier="ada@example.com", total_amount=100, idempotency_key="r-1")
    )
    conflict = TransactionBody(identifier="ada@example.com", total_amount=200, idempotency_key="r-1")
    await raised(e.IdempotencyKeyConflict, loyalty.create_transaction(conflict))
    await raised(
        e.RewardUnavailable, loyalty.create_redemption(RedeemBody(identifier="ada@example.com", reward_id=off["id"]))
    )
    await raised(
        e.BranchRequired,
        loyalty.create_redemption(RedeemBody(identifier="ada@example.com", reward_id=north_only["id"])),
    )
    await loyalty.create_redemption(RedeemBody(identifier="ada@example.com", reward_id=limited["id"]))
    await raised(
        e.RedemptionLimitReached,
        loyalty.create_redemption(RedeemBody(identifier="ada@example.com", reward_id=limited["id"])),
    )
    await loyalty.create_redemption(RedeemBody(identifier="ada@example.com", reward_id=last["id"]))
    await raised(
        e.OutOfStock, loyalty.create_redemption(RedeemBody(identifier="bob@example.com", reward_id=last["id"]))
    )

    used = await loyalty.create_redemption(RedeemBody(identifier="bob@example.com", reward_id=one["id"]))
    await loyalty.verify_redemption(used.confirmation_code)
    await raised(e.CodeAlreadyUsed, loyalty.verify_redemption(used.confirmation_code))
    cancelled = await loyalty.create_redemption(RedeemBody(identifier="bob@example.com", reward_id=one["id"]))
    await setup(client, tenant, f"/redemptions/{cancelled.confirmation_code}/cancel", {})
    await raised(e.CodeCancelled, loyalty.verify_redemption(cancelled.confirmation_code))

    voucher = {"customer_id": ada.id, "discount_type": "fixed_amount", "discount_value": 100}
    spent = await setup(client, tenant, "/vouchers", voucher)
    await loyalty.verify_voucher(spent["code"])
    await raised(e.VoucherAlreadyUsed, loyalty.verify_voucher(spent["code"]))

    expiring = await loyalty.create_redemption(RedeemBody(identifier="bob@example.com", reward_id=one["id"]))
    dated = await setup(client, tenant, "/vouchers", {**voucher, "valid_until": date.today().isoformat()})
    later = (datetime.now(UTC) + timedelta(days=400)).isoformat()
    await admin(client, "PUT", "/admin/v1/test-clock", {"now": later})
    try:
        await raised(e.CodeExpired, loyalty.verify_redemption(expiring.confirmation_code))
        await raised(e.VoucherExpired, loyalty.verify_voucher(dated["code"]))
    finally:
        await admin(client, "DELETE", "/admin/v1/test-clock")

    await loyalty.create_transaction(TransactionBody(identifier="ada@example.com", total_amount=100))
    await loyalty.create_transaction(TransactionBody(identifier="ada@example.com", total_amount=100))
    spent_plan = await raised(
        e.PlanLimitExceeded, loyalty.create_transaction(TransactionBody(identifier="ada@example.com", total_amount=100))
    )
    assert spent_plan.status == 429


async def test_access_errors(client: Client) -> None:
    """CLIENT-4: the vendor's state refuses a client that already holds a token."""
    no_hooks = connect(client, await make_tenant(client))
    await raised(e.Forbidden, no_hooks.list_events())

    tenant = await make_tenant(client)
    wrong = Recording(str(client.base_url), tenant.client_id, "not-the-secret", http_client=client)
    await raised(e.InvalidClient, wrong.get_wallet(1))

    loyalty = connect(client, tenant)
    await loyalty.list_products()
    vendor = f"/admin/v1/vendors/{tenant.vendor_id}"
    past = "2001-01-01T00:00:00Z"
    await admin(client, "PATCH", vendor, {"subscription_ends_at": past})
    await raised(e.SubscriptionExpired, loyalty.create_product(ProductCreate(external_id="S", name="S")))
    for status, kind in [
        ("pending", e.VendorPending),
        ("inactive", e.VendorInactive),
        ("deactivated", e.VendorDeactivated),
    ]:
        await admin(client, "PATCH", vendor, {"status": status})
        await raised(kind, loyalty.list_products())
    await admin(client, "PATCH", vendor, {"status": "suspended", "suspended_grace_until": past})
    await raised(e.VendorSuspended, loyalty.list_products())


async def test_the_rate_limit_is_raised_when_waiting_would_pass_a_minute(client: Client) -> None:
    """CLIENT-4, CLIENT-1: the waits are the injected sleep's, 60 seconds at most in all."""
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    tenant = await make_tenant(client, plan={"rate_limit_per_minute": 3})
    loyalty = Recording(str(client.base_url), tenant.client_id, tenant.client_secret, http_client=client, sleep=sleep)

    async def until_refused() -> None:
        for _ in range(10):
            await loyalty.list_products()

    with pytest.raises(e.RateLimited) as limited:
        await until_refused()
    assert limited.value.status == 429
    assert 1 <= len(slept) <= 2
    assert sum(slept) <= 60


def test_every_error_class_is_raised_here_or_named_with_its_reason() -> None:
    """CLIENT-4"""
    named = set(re.findall(r"\be\.(\w+)\b", Path(__file__).read_text(encoding="utf-8")))
    shown = {code for code, kind in e.ERRORS_BY_CODE.items() if kind.__name__ in named}
    assert set(e.ERRORS_BY_CODE) - shown - set(NOT_THROUGH_THE_CLIENT) == set()
    assert shown & set(NOT_THROUGH_THE_CLIENT) == set()
