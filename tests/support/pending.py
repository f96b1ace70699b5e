"""Purchases whose points wait (PENDING-2), written as the purchase statement of a vendor with
``pending_days`` above 0 writes them (the transaction, its pending row, the wallet's next instant;
no entry), and returns of them through the till's return (PENDING-6), for the tests that need
pending points beside other writes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import FixedClock
from loyalty_core.db import driver_connection
from loyalty_core.earning.models import Transaction
from loyalty_core.earning.till_return import ReturnRequest, till_return
from loyalty_core.tenancy.rules.access import PlanLimits, VendorContext
from loyalty_core.wallet.models import PendingPoints
from loyalty_core.wallet.services import WalletService

PLAN = PlanLimits(0, 0, 0, 0, 0, 1000, 0, campaigns=True, customer_moments=True, point_expiry=True)


@dataclass
class Bought:
    """A purchase with pending points: its id, total, points, when it was made and when they join."""

    id: int
    total: int
    points: int
    created_at: datetime
    available_at: datetime
    returned: int = 0


async def buy_pending(
    db: AsyncSession,
    vendor_id: int,
    customer_id: int,
    total: int,
    now: datetime,
    *,
    key: str,
    wait: timedelta,
    lasts: timedelta | None = None,
) -> Bought:
    """A purchase at ``now`` earning ``total // 100`` points that wait ``wait``; their lot lasts
    ``lasts`` from their instant (None: no end). Flushed, not committed."""
    wallet = await WalletService(db, FixedClock(now)).posting.wallet_of(vendor_id, customer_id, lock=True)
    at, points = now + wait, total // 100
    made = Transaction(
        vendor_id=vendor_id,
        customer_id=customer_id,
        idempotency_key=key,
        total_amount=total,
        points_earned=points,
        rules_applied=[],
        points_available_at=at,
        created_at=now,
        updated_at=now,
    )
    db.add(made)
    await db.flush()
    if points:
        db.add(
            PendingPoints(
                vendor_id=vendor_id,
                wallet_id=wallet.id,
                transaction_id=made.id,
                entry_type="earn",
                points=points,
                available_at=at,
                lot_expires_at=None if lasts is None else at + lasts,
                causer_type="api_client",
                causer_id="cl_till",
                created_at=now,
                updated_at=now,
            )
        )
        wallet.pending_next_at = at if wallet.pending_next_at is None else min(wallet.pending_next_at, at)
        await db.flush()
    return Bought(int(made.id), total, points, now, at)


async def return_of(db: AsyncSession, vendor_id: int, bought: Bought, amount: int, now: datetime, *, key: str) -> int:
    """Return ``amount`` cents of ``bought`` at ``now`` through the till's return; the points it
    took back (``points_reversed``)."""
    caller = VendorContext(vendor_id, 1, "cl_till", ("read", "write"), PLAN, None, None, pending_days=1)
    done = await till_return(await driver_connection(db), caller, bought.id, ReturnRequest(amount), key=key, now=now)
    bought.returned += amount
    return done.view.points_reversed


async def complete_referral(
    db: AsyncSession,
    vendor_id: int,
    bought: Bought,
    *,
    referee_id: int,
    referrer_id: int,
    points: tuple[int, int],
    lasts: timedelta | None,
) -> None:
    """The referral ``bought`` completed, as the purchase's completion writes it (REFERRAL-15): the
    referral completed with the purchase's id, and a ``referral`` pending row on each side's wallet
    (``points``: the referee's, the referrer's) due at the purchase's instant. Flushed."""
    at = bought.available_at
    ends = None if lasts is None else at + lasts
    referee_points, referrer_points = points
    await db.execute(
        text("""
INSERT INTO referrals (id, vendor_id, referrer_id, referee_id, status, completed_at, referrer_points,
                       referee_points, transaction_id, created_at, updated_at)
VALUES (nextval('referrals_id_seq'), :v, :r, :e, 'completed', :now, :rp, :ep, :t, :now, :now)"""),
        {
            "v": vendor_id,
            "r": referrer_id,
            "e": referee_id,
            "now": bought.created_at,
            "rp": referrer_points,
            "ep": referee_points,
            "t": bought.id,
        },
    )
    service = WalletService(db, FixedClock(bought.created_at))
    for customer_id, earned in ((referee_id, referee_points), (referrer_id, referrer_points)):
        if earned == 0:
            continue  # as the completion: a side credited nothing gets no pending row
        wallet = await service.posting.wallet_of(vendor_id, customer_id, lock=True)
        db.add(
            PendingPoints(
                vendor_id=vendor_id,
                wallet_id=wallet.id,
                transaction_id=bought.id,
                entry_type="referral",
                points=earned,
                available_at=at,
                lot_expires_at=ends,
                causer_type="api_client",
                causer_id="cl_till",
                created_at=bought.created_at,
                updated_at=bought.created_at,
            )
        )
        wallet.pending_next_at = at if wallet.pending_next_at is None else min(wallet.pending_next_at, at)
        await db.flush()
