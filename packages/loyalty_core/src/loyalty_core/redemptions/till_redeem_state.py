"""Round trip 1 of a till's redemption: the write protocol's locks (``wallet/till_protocol.py``: the
key's, then the wallet's), and the one read (taken after those locks were granted) of everything
the checks need, as named rows.

The customer is found through the identifier's unique index (``customers.till_holder``); the same read
brings the reward with its branches, the branch, the key's earlier redemption, the customer's count
for the reward's limit (all but the redemptions that do not count), the wallet's open lots and the
vendor's code prefix.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from loyalty_core.customers.models import CustomerStatus
from loyalty_core.customers.till_holder import HOLDER_BY_IDENTIFIER, HOLDER_WALLET_LOCK, HolderParams
from loyalty_core.tenancy.rules.access import BranchRef
from loyalty_core.tiers.till_months import tier_facts
from loyalty_core.till_sql import statements_of
from loyalty_core.wallet.rules import Lot
from loyalty_core.wallet.till_protocol import Locks, key_lock

SQL = statements_of(__name__)


class RedeemRead(HolderParams, frozen=True):
    """The parameters of round trip 1: its locks and its read (the holder's, and these)."""

    reward_id: int
    idempotency_key: str
    branch_key: str | None
    """The payload's branch key."""
    default_branch_id: int | None
    """The credential's default branch, when the payload names none."""
    not_counted: str
    """The redemptions' status the per-customer limit does not count."""
    now: datetime
    """The instant the customer's tier is read for (TIER-12)."""


_TIER = tier_facts(customer="c.id", merged_into="c.merged_into_id")

LOCKS = Locks(key=SQL("key_lock", key_lock("redemption"), RedeemRead), wallet=HOLDER_WALLET_LOCK)

STATE = SQL(
    "state",
    f"""
WITH {HOLDER_BY_IDENTIFIER}
SELECT c.id AS customer_id, c.status AS customer_status, w.id AS wallet_id, w.balance, w.pending_next_at,
       r.id AS reward_id, r.deleted_at, r.status, r.available_from, r.available_until, r.point_cost, r.total_stock,
       r.remaining_stock, r.max_redemptions_per_customer, r.code_valid_for_hours, r.name, r.type,
       r.discount_type, r.discount_value, r.product_reference, r.payment_amount, r.min_tier,
       CASE WHEN r.min_tier IS NOT NULL THEN {_TIER} END AS tier,
       (SELECT array_agg(rb.branch_id) FROM reward_branches rb
         WHERE rb.vendor_id = %(vendor_id)s AND rb.reward_id = r.id) AS reward_branches,
       CASE WHEN r.max_redemptions_per_customer IS NOT NULL THEN
         (SELECT count(*) FROM redemptions x
           WHERE x.vendor_id = %(vendor_id)s AND x.customer_id = c.id AND x.reward_id = r.id
             AND x.status <> %(not_counted)s)
       END AS held,
       b.id AS branch_id, b.external_id AS branch_key, b.name AS branch_name, b.type AS branch_type,
       b.active AS branch_active,
       p.id AS earlier_id, p.customer_id AS earlier_customer_id, p.reward_id AS earlier_reward_id,
       p.points_deducted AS earlier_points, p.confirmation_code AS earlier_code,
       p.remaining_balance AS earlier_remaining,
       vendor.code_prefix, lots.ids AS lot_ids, lots.ends AS lot_ends, lots.rems AS lot_remaining
FROM (SELECT code_prefix FROM vendors WHERE id = %(vendor_id)s) vendor
LEFT JOIN holder h ON true
LEFT JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = h.id AND c.status <> '{CustomerStatus.ANONYMIZED}'
LEFT JOIN wallets w ON w.vendor_id = %(vendor_id)s AND w.customer_id = c.id
LEFT JOIN rewards r ON r.vendor_id = %(vendor_id)s AND r.id = %(reward_id)s
LEFT JOIN branches b ON b.vendor_id = %(vendor_id)s AND b.id = coalesce(
    (SELECT k.id FROM branches k WHERE k.vendor_id = %(vendor_id)s AND k.external_id = %(branch_key)s),
    %(default_branch_id)s)
LEFT JOIN redemptions p ON p.vendor_id = %(vendor_id)s AND p.idempotency_key = %(idempotency_key)s
LEFT JOIN LATERAL (
    SELECT array_agg(l.id) AS ids, array_agg(l.expires_at) AS ends, array_agg(l.remaining) AS rems
    FROM point_lots l WHERE l.wallet_id = w.id AND l.remaining > 0
) lots ON true
""",
    RedeemRead,
)


@dataclass(frozen=True, slots=True)
class RewardRow:
    """The reward as ``check_available`` and the write need it (the names of ``Reward``'s columns)."""

    id: int
    deleted_at: datetime | None
    status: str
    available_from: date | None
    available_until: date | None
    point_cost: int
    total_stock: int | None
    remaining_stock: int | None
    max_redemptions_per_customer: int | None
    code_valid_for_hours: int | None
    name: str
    type: str
    discount_type: str | None
    discount_value: int | None
    product_reference: str | None
    payment_amount: int


@dataclass(frozen=True, slots=True)
class LockedRow:
    wallet_id: int


@dataclass(frozen=True, slots=True)
class StateRow:
    """The row of :data:`STATE`: what the checks need, read under the wallet's lock."""

    customer_id: int | None
    customer_status: str | None
    wallet_id: int | None
    balance: int | None
    pending_next_at: datetime | None
    reward_id: int | None
    deleted_at: datetime | None
    status: str | None
    available_from: date | None
    available_until: date | None
    point_cost: int | None
    total_stock: int | None
    remaining_stock: int | None
    max_redemptions_per_customer: int | None
    code_valid_for_hours: int | None
    name: str | None
    type: str | None
    discount_type: str | None
    discount_value: int | None
    product_reference: str | None
    payment_amount: int | None
    min_tier: str | None
    tier: Any
    """The tier's facts (``tiers.till_months.tier_facts``), read only for a reward with a
    ``min_tier`` (TIER-12)."""
    reward_branches: list[int] | None
    held: int | None
    branch_id: int | None
    branch_key: str | None
    branch_name: str | None
    branch_type: str | None
    branch_active: bool | None
    earlier_id: int | None
    earlier_customer_id: int | None
    earlier_reward_id: int | None
    earlier_points: int | None
    earlier_code: str | None
    earlier_remaining: int | None
    code_prefix: str | None
    lot_ids: list[int] | None
    lot_ends: list[datetime | None] | None
    lot_remaining: list[int] | None

    def reward(self) -> RewardRow:
        assert self.reward_id is not None
        return RewardRow(
            id=self.reward_id,
            deleted_at=self.deleted_at,
            status=self.status or "",
            available_from=self.available_from,
            available_until=self.available_until,
            point_cost=self.point_cost or 0,
            total_stock=self.total_stock,
            remaining_stock=self.remaining_stock,
            max_redemptions_per_customer=self.max_redemptions_per_customer,
            code_valid_for_hours=self.code_valid_for_hours,
            name=self.name or "",
            type=self.type or "",
            discount_type=self.discount_type,
            discount_value=self.discount_value,
            product_reference=self.product_reference,
            payment_amount=self.payment_amount or 0,
        )

    def branch(self) -> BranchRef | None:
        if self.branch_id is None:
            return None
        return BranchRef(
            self.branch_id,
            self.branch_key or "",
            self.branch_name or "",
            self.branch_type or "",
            bool(self.branch_active),
        )

    def lots(self) -> list[Lot]:
        return [
            Lot(i, end, left)
            for i, end, left in zip(self.lot_ids or (), self.lot_ends or (), self.lot_remaining or (), strict=True)
        ]
