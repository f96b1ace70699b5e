"""The client against the real service: every operation of the public document called through it
and answered as its generated types say (CLIENT-7), each list read over three pages (CLIENT-5)."""

from __future__ import annotations

from collections.abc import Awaitable

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from loyalty_client.error_codes import CardSendThrottled
from loyalty_client.models import (
    CustomerCreate,
    CustomerUpdate,
    EndpointCreate,
    EndpointPatch,
    LinkExternalId,
    PreviewBody,
    ProductBatch,
    ProductCreate,
    ProductPatch,
    ProductReplace,
    RedeemBody,
    ReturnBody,
    RewardFromProduct,
    SaveUrl,
    TokenRequest,
    TransactionBody,
    WalletAdjust,
)
from loyalty_client.operations import OPERATIONS
from tests.support.loyalty_client import connect
from tests.support.tenants import admin
from tests.support.webhooks import webhook_tenant


async def answer_of(call: Awaitable[object]) -> object:
    """What an operation typed to answer None really answered, so a test can assert it is None."""
    return await call


async def test_every_operation_answers_through_the_client(client: AsyncTestClient[Litestar]) -> None:
    """CLIENT-7: one walk through the shop's day touches every operation the client has."""
    tenant = await webhook_tenant(client, plan={"features": {"tiers": True}})
    vendor = f"/admin/v1/vendors/{tenant.vendor_id}"
    await admin(client, "POST", f"{vendor}/earn-rules", {"name": "Euro", "points_per_unit": 1, "unit_amount": 100})
    rungs = [("bronze", "Bronze", 0), ("silver", "Silver", 1000)]
    tiers = [{"key": k, "name": n, "threshold": t, "multiplier_percent": 100} for k, n, t in rungs]
    await admin(client, "PUT", f"{vendor}/tiers", {"basis": "spend", "tiers": tiers})
    loyalty = connect(client, tenant)

    assert (await loyalty.check_liveness())["status"] == "ok"
    assert "status" in await loyalty.check_readiness()
    issued = await loyalty.issue_token(
        TokenRequest(grant_type="client_credentials", client_id=tenant.client_id, client_secret=tenant.client_secret)
    )
    assert (issued.token_type.lower(), issued.expires_in > 0) == ("bearer", True)

    made = await loyalty.create_product(ProductCreate(external_id="SKU-1", name="Coffee", price_cents=250))
    assert (made.external_id, made.price_cents) == ("SKU-1", 250)
    assert (await loyalty.get_product("SKU-1")).name == "Coffee"
    assert (await loyalty.update_product("SKU-1", ProductPatch(price_cents=300))).price_cents == 300
    assert (await loyalty.replace_product("SKU-1", ProductReplace(name="Coffee large"))).price_cents is None
    outcome = await loyalty.upsert_products(ProductBatch(products=[ProductCreate(external_id="SKU-2", name="Tea")]))
    assert (outcome.summary.created, outcome.results[0].status) == (1, "created")
    assert [p.external_id for p in (await loyalty.list_products()).data] == ["SKU-1", "SKU-2"]
    assert await answer_of(loyalty.delete_product("SKU-2")) is None
    reward = await loyalty.create_reward_from_product("SKU-1", RewardFromProduct(point_cost=10))

    assert [t.key for t in (await loyalty.get_tiers()).tiers] == ["bronze", "silver"]
    customer = await loyalty.register_customer(CustomerCreate(first_name="Ada", email="ada@example.com"))
    assert customer.tier is not None
    assert customer.tier.key == "bronze"
    card = customer.loyalty_card_code
    assert card is not None
    assert (customer.marketing_consent, customer.marketing_consent_statement_version) == (False, None)
    assert (await loyalty.lookup_customer(identifier=card)).id == customer.id
    linked = await loyalty.link_external_id(LinkExternalId(external_id="crm-1", customer_id=customer.id))
    assert linked.external_id == "crm-1"
    updated = await loyalty.update_customer_by_external_id("crm-1", CustomerUpdate(last_name="Lovelace"))
    assert (updated.first_name, updated.last_name) == ("Ada", "Lovelace")
    replaced = await loyalty.replace_customer_by_external_id("crm-1", CustomerUpdate(phone="+31201234567"))
    assert replaced.phone == "+31201234567"
    sent = await loyalty.send_card(customer.id)
    assert (sent.customer_id, sent.queued) == (customer.id, True)
    with pytest.raises(CardSendThrottled) as throttled:
        await loyalty.send_card_by_external_id("crm-1")
    assert throttled.value.status == 429

    preview = await loyalty.preview_transaction(PreviewBody(identifier=card, total_amount=2000))
    assert preview.points_earned == 20
    purchase = await loyalty.create_transaction(TransactionBody(identifier=card, total_amount=2000))
    assert (purchase.points_earned, len(purchase.idempotency_key)) == (20, 36)
    assert (await loyalty.get_transaction(purchase.id)).total_amount == 2000
    assert [t.id for t in (await loyalty.list_transactions(customer.id)).data] == [purchase.id]
    assert list((await loyalty.list_referrals(customer.id)).data) == []
    climbed = (await loyalty.lookup_customer(identifier=card)).tier
    assert climbed is not None
    assert (climbed.key, climbed.qualifying_total) == ("silver", 2000)
    returned = await loyalty.create_return(purchase.id, ReturnBody(amount=500))
    assert returned.points_reversed == 5
    assert [r.id for r in (await loyalty.list_returns(purchase.id)).data] == [returned.id]

    entry = await loyalty.adjust_wallet(customer.id, WalletAdjust(amount=50, reason="welcome"))
    assert entry.amount == 50
    assert (await loyalty.get_wallet(customer.id)).balance == 65
    assert len((await loyalty.list_ledger_entries(customer.id)).data) == 3

    affordable = await loyalty.list_rewards(identifier=card, affordable=True)
    assert [r.id for r in affordable.data] == [reward.id]
    redemption = await loyalty.create_redemption(RedeemBody(identifier=card, reward_id=reward.id))
    assert (redemption.points_deducted, redemption.remaining_balance) == (10, 55)
    code = redemption.confirmation_code
    assert (await loyalty.get_redemption(code)).status == redemption.status
    assert (await loyalty.verify_redemption(code)).used_at is not None

    voucher = await admin(
        client,
        "POST",
        f"{vendor}/vouchers",
        {"customer_id": customer.id, "discount_type": "fixed_amount", "discount_value": 500},
    )
    assert (await loyalty.get_voucher(voucher["code"])).discount_value == 500
    assert (await loyalty.verify_voucher(voucher["code"])).used_at is not None

    card_pass = await loyalty.get_wallet_pass(customer.id, platform="platform_b")
    assert isinstance(card_pass, SaveUrl)

    events = await loyalty.list_events(type="customer.created")
    assert len(events.data) == 1
    assert (await loyalty.get_event(events.data[0].id)).type == "customer.created"

    endpoint = await loyalty.create_webhook_endpoint(EndpointCreate(url="http://127.0.0.1:9/hook", events=["*"]))
    assert endpoint.secret.startswith("whsec_")
    assert (await loyalty.get_webhook_endpoint(endpoint.id)).url == "http://127.0.0.1:9/hook"
    patched = await loyalty.update_webhook_endpoint(endpoint.id, EndpointPatch(description="till"))
    assert patched.description == "till"
    assert [e.id for e in (await loyalty.list_webhook_endpoints()).data] == [endpoint.id]
    assert (await loyalty.rotate_webhook_secret(endpoint.id)).secret != endpoint.secret
    ping = await loyalty.test_webhook_endpoint(endpoint.id)
    assert ping.event_id.startswith("evt_")
    assert len((await loyalty.list_webhook_deliveries(endpoint.id)).data) >= 1
    assert await answer_of(loyalty.delete_webhook_endpoint(endpoint.id)) is None

    assert loyalty.called == {op.op_id for op in OPERATIONS}
