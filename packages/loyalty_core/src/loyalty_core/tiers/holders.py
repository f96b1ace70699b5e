"""The tier rule as one condition on ``customers`` (TIER-3, MAIL-19): whether an account holds one of
some tiers at ``now``, decided by the database over the vendor's months of the window, for the
whole-vendor reads that cannot bring every account's months into Python (the campaign-mail
audience: a million customers' months took 14 to 51 s that way, bench/results/scale-findings.md).

It is the rule's second form beside ``rules.held``: an account's best rolling total over the months
``c-G`` to ``c`` (each the sum of its merge family's amounts of the ``P`` months ending there), and
the tier whose threshold band holds it. tests/core/tiers/test_holders_properties.py holds the two
forms to the same answer for every account."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, ColumnElement, Integer, and_, cast, exists, false, func, or_, select, true

from loyalty_core.customers.models import Customer
from loyalty_core.tiers.models import first_day, tier_months
from loyalty_core.tiers.rules import Ladder, TierBasis, first_counted_month, month_of

_C = Customer.__table__.c
_T = tier_months.c


def bands(ladder: Ladder, keys: Iterable[str]) -> list[tuple[int, int | None]]:
    """The best totals that give one of ``keys`` above the first tier, as ``[low, high)`` ranges of
    threshold bands (``high`` None: no tier above), neighbouring bands joined; the first tier's band
    is left out (every total below the second threshold, negative ones too, and no month at all)."""
    wanted = set(keys)
    rungs = ladder.rungs
    found: list[tuple[int, int | None]] = []
    for i in range(1, len(rungs)):
        if rungs[i].key not in wanted:
            continue
        high = rungs[i + 1].threshold if i + 1 < len(rungs) else None
        if found and found[-1][1] == rungs[i].threshold:
            found[-1] = (found[-1][0], high)
        else:
            found.append((rungs[i].threshold, high))
    return found


def _in_bands(total: ColumnElement[Any], ranges: list[tuple[int, int | None]]) -> ColumnElement[bool]:
    return or_(*(total >= low if high is None else and_(total >= low, total < high) for low, high in ranges))


def best_totals(vendor_id: int, ladder: Ladder, now: datetime) -> Any:
    """Per kept account with a month in the window, ``holder`` and ``best``: the highest rolling
    total the rule reads at ``now``. Each month row counts towards the windows ending ``m`` to
    ``m + P - 1`` that lie in ``c-G .. c``; a merged account's rows count for the account it was
    merged into (MERGE-8: families are flat), found through ``ix_customers_vendor_merged_into``."""
    current = month_of(now)
    period, grace = ladder.period_months, ladder.grace_months
    merged = (
        select(_C.id, _C.merged_into_id)
        .where(_C.vendor_id == vendor_id, _C.merged_into_id.is_not(None))
        .subquery("merged")
    )
    holder = func.coalesce(merged.c.merged_into_id, _T.customer_id)
    amount = _T.points if ladder.basis is TierBasis.POINTS else _T.spend
    rows = tier_months.outerjoin(merged, merged.c.id == _T.customer_id)
    window = and_(
        _T.vendor_id == vendor_id,
        _T.month >= first_day(first_counted_month(ladder, now)),
        _T.month <= first_day(current),
    )
    if grace == 0:
        # one window, the one ending now: the best is its total
        summed = select(holder.label("holder"), func.sum(amount).label("best")).select_from(rows).where(window)
        return summed.group_by(holder).subquery("best_totals")
    month = cast(func.extract("year", _T.month) * 12 + func.extract("month", _T.month) - 1, Integer)
    ends = func.generate_series(func.greatest(month, current - grace), func.least(month + period - 1, current))
    counted = (
        select(holder.label("holder"), ends.label("ending"), cast(amount, BigInteger).label("amount"))
        .select_from(rows)
        .where(window)
        .subquery("counted")
    )
    totals = (
        select(counted.c.holder, func.sum(counted.c.amount).label("total"))
        .group_by(counted.c.holder, counted.c.ending)
        .subquery("totals")
    )
    return (
        select(totals.c.holder, func.max(totals.c.total).label("best"))
        .group_by(totals.c.holder)
        .subquery("best_totals")
    )


def holding(vendor_id: int, ladder: Ladder | None, keys: Iterable[str], now: datetime) -> ColumnElement[bool]:
    """Whether a row of ``customers`` holds one of the tiers ``keys`` at ``now`` by TIER-3 over
    ``ladder`` (the one that applies: None without one or while the plan lacks ``tiers``, TIER-5,
    and then nobody holds a tier). With the first tier among ``keys`` the accounts whose best falls
    in another tier's band are left out (an anti-join); otherwise those whose best falls in a
    wanted band are picked (a semi-join). The keys the ladder lacks pick nobody."""
    if ladder is None or not ladder.rungs:
        return false()
    wanted = set(keys)
    first = ladder.rungs[0].key
    best = best_totals(vendor_id, ladder, now)
    if first in wanted:
        others = bands(ladder, (rung.key for rung in ladder.rungs[1:] if rung.key not in wanted))
        if not others:
            return true()
        return ~exists().where(best.c.holder == _C.id, _in_bands(best.c.best, others))
    chosen = bands(ladder, wanted)
    if not chosen:
        return false()
    return exists().where(best.c.holder == _C.id, _in_bands(best.c.best, chosen))
