"""Referrals written straight to their rows, committed, for the tests of a referral's completion:
the vendor's programme and its plan's ``referrals`` feature, a referee registered with a referrer's
code (``customers.referred_by_id`` and the pending ``referrals`` row), and what the completion left
(the referral, the pending rows, the payouts, the events). The programme's admin API and the
registration with a code build the same rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine


async def open_programme(
    engine: AsyncEngine,
    vendor_id: int,
    *,
    referrer_points: int = 100,
    referee_points: int = 50,
    min_purchase_amount: int = 0,
    max_referrals_per_customer: int = 0,
    active: bool = True,
    feature: bool = True,
) -> None:
    """The vendor's one programme (replaced when there is one) and its plan's ``referrals`` feature."""
    async with engine.begin() as conn:
        await conn.execute(
            text("UPDATE plans SET feature_referrals = :f WHERE id = (SELECT plan_id FROM vendors WHERE id = :v)"),
            {"v": vendor_id, "f": feature},
        )
        await conn.execute(
            text("""
INSERT INTO referral_programmes
    (id, vendor_id, referrer_points, referee_points, min_purchase_amount, max_referrals_per_customer, active,
     created_at, updated_at)
VALUES (nextval('referral_programmes_id_seq'), :v, :rp, :ep, :min, :cap, :active, now(), now())
ON CONFLICT (vendor_id) DO UPDATE SET referrer_points = excluded.referrer_points,
    referee_points = excluded.referee_points, min_purchase_amount = excluded.min_purchase_amount,
    max_referrals_per_customer = excluded.max_referrals_per_customer, active = excluded.active"""),
            {
                "v": vendor_id,
                "rp": referrer_points,
                "ep": referee_points,
                "min": min_purchase_amount,
                "cap": max_referrals_per_customer,
                "active": active,
            },
        )


async def refer(engine: AsyncEngine, vendor_id: int, referrer_id: int, referee_id: int) -> int:
    """The referee registered with the referrer's code: ``referred_by_id`` and a pending referral."""
    async with engine.begin() as conn:
        await conn.execute(
            text("UPDATE customers SET referred_by_id = :r WHERE vendor_id = :v AND id = :e"),
            {"v": vendor_id, "r": referrer_id, "e": referee_id},
        )
        made = await conn.scalar(
            text("""
INSERT INTO referrals (id, vendor_id, referrer_id, referee_id, status, created_at, updated_at)
VALUES (nextval('referrals_id_seq'), :v, :r, :e, 'pending', now(), now()) RETURNING id"""),
            {"v": vendor_id, "r": referrer_id, "e": referee_id},
        )
    assert made is not None
    return int(made)


@dataclass(frozen=True, slots=True)
class ReferralRow:
    referrer_id: int
    status: str
    completed_at: datetime | None
    referrer_points: int
    referee_points: int
    transaction_id: int | None


async def referral_of(engine: AsyncEngine, vendor_id: int, referee_id: int) -> ReferralRow:
    async with engine.connect() as conn:
        row = (
            await conn.execute(
                text(
                    "SELECT referrer_id, status, completed_at, referrer_points, referee_points, transaction_id"
                    " FROM referrals WHERE vendor_id = :v AND referee_id = :e"
                ),
                {"v": vendor_id, "e": referee_id},
            )
        ).one()
    return ReferralRow(
        row.referrer_id, row.status, row.completed_at, row.referrer_points, row.referee_points, row.transaction_id
    )


async def referral_pending(engine: AsyncEngine, vendor_id: int, customer_id: int) -> list[tuple[Any, ...]]:
    """The customer's wallet's ``referral`` pending rows: (points, transaction, available_at, lot end)."""
    async with engine.connect() as conn:
        rows = await conn.execute(
            text("""
SELECT p.points, p.transaction_id, p.available_at, p.lot_expires_at FROM pending_points p
JOIN wallets w ON w.vendor_id = p.vendor_id AND w.id = p.wallet_id
WHERE p.vendor_id = :v AND w.customer_id = :c AND p.entry_type = 'referral' ORDER BY p.id"""),
            {"v": vendor_id, "c": customer_id},
        )
        return [(r.points, r.transaction_id, r.available_at, r.lot_expires_at) for r in rows]


async def paid_count(engine: AsyncEngine, vendor_id: int, referrer_id: int) -> int:
    """The referrer's paid completions (``referral_payouts``; 0 without a row)."""
    async with engine.connect() as conn:
        paid = await conn.scalar(
            text("SELECT paid FROM referral_payouts WHERE vendor_id = :v AND referrer_id = :r"),
            {"v": vendor_id, "r": referrer_id},
        )
    return int(paid or 0)


async def completed_events(engine: AsyncEngine, vendor_id: int) -> list[dict[str, Any]]:
    """The vendor's ``referral.completed`` events' data, oldest first."""
    async with engine.connect() as conn:
        rows = await conn.execute(
            text("SELECT data FROM events WHERE vendor_id = :v AND type = 'referral.completed' ORDER BY id"),
            {"v": vendor_id},
        )
        return [dict(r.data) for r in rows]
