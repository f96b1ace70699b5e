"""Customer moments: which occurrence of a birthday, an anniversary or a lapse a purchase falls in.

Pure date arithmetic on UTC days, shared by the engine and by whatever records due moments ahead.
"""

from __future__ import annotations

from calendar import isleap
from datetime import date

from loyalty_core.earning.rules.terms import CampaignTerms, CustomerFacts, Moment, MomentKey


def anniversary_in(origin: date, year: int) -> date:
    """``origin``'s day in ``year``; 29 February counts as 28 February in other years."""
    if origin.month == 2 and origin.day == 29 and not isleap(year):
        return date(year, 2, 28)
    return origin.replace(year=year)


def latest_occurrence(origin: date, today: date) -> date | None:
    """The most recent return of ``origin``'s day on or before ``today``, never the origin itself
    (a customer's first day is not its anniversary, nor the day of birth a birthday)."""
    for year in (today.year, today.year - 1):
        if year <= origin.year:
            return None
        day = anniversary_in(origin, year)
        if day <= today:
            return day
    return None  # pragma: no cover - last year's day is always on or before today


def due(campaign: CampaignTerms, facts: CustomerFacts, today: date) -> MomentKey | None:
    """The occurrence of the campaign's moment this purchase may be paid for, or None.

    Birthday and anniversary: the purchase is on the day or within ``window_days`` after it
    (without ``window_days``, on the day only). Win-back: at least ``inactive_days`` have passed
    since the last purchase, or since ``customer_since`` when there was none. An occurrence
    already paid is not due again: once per moment per year, once per lapse.
    """
    key: MomentKey | None = None
    if campaign.moment in (Moment.BIRTHDAY, Moment.ANNIVERSARY):
        origin = facts.date_of_birth if campaign.moment == Moment.BIRTHDAY else facts.customer_since
        day = latest_occurrence(origin, today) if origin is not None else None
        if day is not None and (today - day).days <= (campaign.window_days or 0):
            key = MomentKey(campaign.moment, day)
    elif campaign.moment == Moment.WIN_BACK and campaign.inactive_days is not None:
        start = facts.last_purchase_on or facts.customer_since
        if start is not None and (today - start).days >= campaign.inactive_days:
            key = MomentKey(Moment.WIN_BACK, start)
    if key is None or key in facts.moments_paid:
        return None
    return key
