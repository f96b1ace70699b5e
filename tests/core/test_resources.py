"""The response shapes the core builds, encoded as the public API answers them: the web layer only
re-exports them, so these run with the core alone."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import msgspec

from loyalty_core.customers.reads.customer import CustomerView, IdentifierView
from loyalty_core.customers.resources import Customer
from loyalty_core.earning.resources import Transaction
from loyalty_core.earning.till_purchase_reads import Item, TransactionView
from loyalty_core.redemptions.resources import RedemptionBody
from loyalty_core.redemptions.till_verify import BranchLabel, RedemptionView
from loyalty_core.tenancy.rules.access import BranchRef

AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def encoded(value: object) -> dict[str, Any]:
    decoded: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(value))
    return decoded


def customer_view(merged_into_id: int | None) -> CustomerView:
    return CustomerView(
        id=7,
        vendor_id=1,
        first_name="Ann",
        last_name=None,
        email="ann@example.com",
        phone=None,
        date_of_birth=date(1990, 5, 17),
        customer_since=date(2026, 1, 2),
        external_id=None,
        locale="nl",
        status="deactivated" if merged_into_id else "active",
        marketing_consent=True,
        marketing_consent_statement_version="v2",
        loyalty_card_code="LC-1",
        identifiers=(IdentifierView("loyalty_card", "LC-1", True),),
        balance=40,
        merged_into_id=merged_into_id,
        consent_granted_at=AT,
        consent_withdrawn_at=None,
        consent_source="api",
        consent_recorded_by="client:till",
        created_at=AT,
        updated_at=AT,
    )


def test_customer_shows_consent_under_its_read_names_and_no_merge_field_unless_closed() -> None:
    body = encoded(Customer.of(customer_view(None)))

    assert body["marketingConsent"] is True
    assert body["marketingConsentStatementVersion"] == "v2"
    assert "marketing_consent" not in body
    assert "merged_into_id" not in body
    assert "consent_source" not in body
    assert body["identifiers"] == [{"type": "loyalty_card", "value": "LC-1", "active": True}]
    assert body["date_of_birth"] == "1990-05-17"
    assert body["is_deactivated"] is False
    assert encoded(Customer.of(customer_view(9)))["merged_into_id"] == 9


def test_transaction_shows_the_branch_label_and_the_rules_as_read() -> None:
    rule = {
        "rule_id": 3,
        "rule_name": "Base",
        "rule_type": "base",
        "points_earned": 12,
        "family": None,
        "moment": None,
        "campaign_version": None,
        "suppressed_by": None,
        "reason": None,
        "line_breakdown": [{"sku": "A", "quantity": 2, "points": 4}],
    }
    view = TransactionView(
        id=5,
        customer_id=7,
        idempotency_key="k-1",
        total_amount=1250,
        description=None,
        external_reference="R-1",
        branch=BranchRef(id=11, external_id="shop-1", name="Centre", type="store", active=False),
        created_at=AT,
        points_earned=12,
        rules_applied=[rule],
        items=(Item(1, "Tea", "A", 2, 625, 1250, None),),
    )

    body = encoded(Transaction.of(view))

    assert body["branch"] == {"external_id": "shop-1", "name": "Centre", "type": "store"}
    assert body["rules_applied"] == [rule]
    assert body["items"] == [
        {"id": 1, "name": "Tea", "sku": "A", "quantity": 2, "unit_price": 625, "line_total": 1250, "category": None}
    ]


def redemption_view(expires_at: datetime) -> RedemptionView:
    return RedemptionView(
        id=4,
        confirmation_code="ABCD-EFGH-JKLM",
        status="valid",
        reward_id=2,
        reward_name="Coffee",
        reward_type="free_product",
        customer_id=7,
        points_deducted=30,
        branch=BranchLabel("shop-1", "Centre", "store"),
        redeemed_at=AT,
        expires_at=expires_at,
        used_at=None,
        cancelled_at=None,
        discount_type=None,
        discount_value=None,
        product_reference="SKU-9",
        payment_amount=0,
    )


def test_redemption_reads_expired_from_the_clock_and_shows_the_balance_on_creation_only() -> None:
    view = redemption_view(AT + timedelta(hours=1))

    read = encoded(RedemptionBody.of(view, AT))
    created = encoded(RedemptionBody.of(view, AT, remaining_balance=10))
    late = encoded(RedemptionBody.of(view, AT + timedelta(hours=1)))

    assert read["status"] == "valid"
    assert "remaining_balance" not in read
    assert created["remaining_balance"] == 10
    assert late["status"] == "expired"
    assert read["reward"] == {"id": 2, "name": "Coffee", "type": "free_product"}
    assert read["type_specific_data"] == {
        "discount_type": None,
        "discount_value": None,
        "product_reference": "SKU-9",
        "payment_amount": 0,
    }
