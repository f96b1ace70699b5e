"""The lot arithmetic of ``wallet/rules.py`` (FIFO lots; LEDGER-2:
added points expire like earned points; deducted points come out of the points that expire first)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loyalty_core.wallet.rules import Lot, NotEnoughPoints, Take, consumption_order, lot_expiry, remaining_after, take

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_lot_ends_exactly_n_days_after_it_was_earned() -> None:
    """LEDGER-2: a lot earned at t with points_expire_after_days = N expires at exactly t + N days."""
    assert lot_expiry(datetime(2026, 1, 31, 13, 5, tzinfo=UTC), 30) == datetime(2026, 3, 2, 13, 5, tzinfo=UTC)
    assert lot_expiry(T0, None) is None


def test_deductions_take_the_soonest_ending_points_first() -> None:
    lots = [Lot(1, None, 10), Lot(2, T0 + timedelta(days=60), 5), Lot(3, T0 + timedelta(days=10), 4)]
    assert take(lots, 12) == [Take(3, 4), Take(2, 5), Take(1, 3)]


def test_equal_end_dates_give_the_older_lot_first() -> None:
    end = T0 + timedelta(days=5)
    assert take([Lot(9, end, 5), Lot(4, end, 5)], 6) == [Take(4, 5), Take(9, 1)]


def test_taking_more_than_the_lots_hold_is_refused() -> None:
    with pytest.raises(NotEnoughPoints):
        take([Lot(1, None, 3)], 4)


lot_lists = st.lists(
    st.builds(
        Lot,
        id=st.integers(1, 10_000),
        expires_at=st.one_of(st.none(), st.integers(0, 400).map(lambda d: T0 + timedelta(days=d))),
        remaining=st.integers(0, 1000),
    ),
    max_size=12,
    unique_by=lambda lot: lot.id,
)


@given(lots=lot_lists, points=st.integers(1, 5000))
def test_taking_never_drives_a_lot_negative_and_takes_exactly(lots: list[Lot], points: int) -> None:
    held = sum(lot.remaining for lot in lots)
    if points > held:
        with pytest.raises(NotEnoughPoints):
            take(lots, points)
        return
    takes = take(lots, points)
    assert sum(t.points for t in takes) == points
    left = remaining_after(lots, takes)
    assert all(v >= 0 for v in left.values())
    assert sum(left.values()) == held - points


@given(lots=lot_lists, points=st.integers(1, 5000))
def test_a_lot_is_touched_only_once_every_sooner_lot_is_drained(lots: list[Lot], points: int) -> None:
    if points > sum(lot.remaining for lot in lots):
        return
    left = remaining_after(lots, take(lots, points))
    order = consumption_order(lots)
    for index, lot in enumerate(order):
        if left[lot.id] < lot.remaining:
            assert all(left[sooner.id] == 0 for sooner in order[:index])
