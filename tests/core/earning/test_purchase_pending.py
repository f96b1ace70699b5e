"""The purchase's write with and without pending points (PENDING-2): a vendor whose ``pending_days``
is 0 binds the statement it always bound, crediting the wallet at once; above 0 the posting credits
nothing and the points go to the pending row, due ``pending_days`` days later to the second."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime, timedelta

from loyalty_core.earning.rules.engine import Scoring
from loyalty_core.earning.till_purchase_write import PendingPurchaseWrite, PurchaseWrite, purchase_write
from loyalty_core.tenancy.rules.access import PlanLimits, VendorContext

NOW = datetime(2031, 9, 1, 9, 30, 15, tzinfo=UTC)
PLAN = PlanLimits(0, 0, 0, 0, 0, 1000, 0, campaigns=True, customer_moments=True, point_expiry=True)
VENDOR = VendorContext(7, 1, "cl_till", ("read", "write"), PLAN, 30, None)


def _write(vendor: VendorContext, points: int) -> PurchaseWrite:
    return purchase_write(
        vendor,
        customer_id=3,
        wallet_id=5,
        branch=None,
        scoring=Scoring(points, ()),
        key="k",
        total_amount=1000,
        description=None,
        external_reference=None,
        lines=[],
        now=NOW,
        period=date(2031, 9, 1),
        hard_limit=0,
        metered=False,
        lease_id=None,
    )


def test_pending_days_0_credits_at_once_with_the_write_it_always_bound() -> None:
    written = _write(VENDOR, 12)
    assert type(written) is PurchaseWrite
    assert (written.amount, written.points_earned, written.points_available_at) == (12, 12, NOW)
    assert (written.lot_points, written.lot_ends) == ([12], [NOW + timedelta(days=30)])


def test_pending_days_above_0_parks_every_point_until_the_instant() -> None:
    written = _write(dataclasses.replace(VENDOR, pending_days=14), 12)
    assert isinstance(written, PendingPurchaseWrite)
    due = NOW + timedelta(days=14)
    assert (written.amount, written.points_earned, written.points_available_at) == (0, 12, due)
    assert (written.pending_points, written.available_at) == (12, due)
    # the lot's end is counted from the instant the points become available
    assert written.pending_lot_ends == due + timedelta(days=30)


def test_a_purchase_that_earned_nothing_still_has_its_instant() -> None:
    written = _write(dataclasses.replace(VENDOR, pending_days=3), 0)
    assert isinstance(written, PendingPurchaseWrite)
    assert (written.pending_points, written.points_available_at) == (0, NOW + timedelta(days=3))
