"""A vendor's earn rules and campaigns as the engine takes them, cached per process by the vendor's
``earning_version`` (raised by every write to them, in the same transaction as the write).

The till's purchase reads that version in the statement it runs anyway, so an unchanged vendor
costs no query for its terms, and a change made through any process is seen by the next purchase
in every process. The cache holds every active rule and campaign; which campaign families pay is
the plan's to say at scoring time (:func:`paying`), so a plan change needs no new version.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Final

from psycopg import AsyncConnection
from psycopg.rows import class_row, dict_row

from loyalty_core.earning.terms import CampaignTerms, EarnRuleTerms, Family
from loyalty_core.till_sql import Params, bound, statements_of

SQL = statements_of(__name__)

MAX_VENDORS: Final = 4096
"""Vendors kept per process; the least recently used one goes first."""


@dataclass(frozen=True, slots=True)
class VendorTerms:
    version: int
    earn_rules: tuple[EarnRuleTerms, ...]
    campaigns: tuple[CampaignTerms, ...]

    @property
    def has_moments(self) -> bool:
        """Whether a purchase needs its customer's moment facts at all."""
        return any(c.family == Family.CUSTOMER_MOMENT for c in self.campaigns)


class TermsOf(Params, frozen=True):
    vendor_id: int


_RULES = SQL(
    "earn_rules",
    """
SELECT id, name, points_per_unit, unit_amount, min_transaction_amount
FROM earn_rules WHERE vendor_id = %(vendor_id)s AND active ORDER BY id
""",
    TermsOf,
)

_CAMPAIGNS = SQL(
    "campaigns",
    """
SELECT id, name, kind, family, moment, multiplier, points, skus, max_points_per_transaction, window_days,
       inactive_days, combinable, min_transaction_amount, starts_on, ends_on, branches, version
FROM campaigns WHERE vendor_id = %(vendor_id)s AND active ORDER BY id
""",
    TermsOf,
)


async def fetch_terms(conn: AsyncConnection[Any], vendor_id: int, version: int) -> VendorTerms:
    """The vendor's active terms, read on ``conn`` (inside the caller's snapshot when it has one)."""
    params = bound(TermsOf(vendor_id=vendor_id))
    async with conn.cursor(row_factory=class_row(EarnRuleTerms)) as rules:
        await rules.execute(_RULES, params, prepare=True)
        earn_rules = tuple(await rules.fetchall())
    async with conn.cursor(row_factory=dict_row) as campaigns:
        await campaigns.execute(_CAMPAIGNS, params, prepare=True)
        rows = await campaigns.fetchall()
    return VendorTerms(version, earn_rules, tuple(_campaign(row) for row in rows))


def _campaign(row: dict[str, Any]) -> CampaignTerms:
    skus, branches = row.pop("skus"), row.pop("branches")
    return CampaignTerms(
        **row,
        skus=frozenset(skus) if skus is not None else None,
        branches=frozenset(branches) if branches is not None else None,
    )


def paying(campaigns: tuple[CampaignTerms, ...], *, transaction: bool, moments: bool) -> list[CampaignTerms]:
    """The campaigns whose family the plan has (EARN-12): a downgraded plan stops paying
    a family without anyone editing its campaigns."""
    allowed = {Family.TRANSACTION: transaction, Family.CUSTOMER_MOMENT: moments}
    return [c for c in campaigns if allowed.get(Family(c.family), False)]


class TermsCache:
    """vendor id -> the terms of one version. Entries are immutable values, so concurrent requests
    of one process share them safely; two requests missing at once both load, and either result is
    right for that version."""

    def __init__(self, max_vendors: int = MAX_VENDORS) -> None:
        self._entries: OrderedDict[int, VendorTerms] = OrderedDict()
        self._max = max_vendors

    def peek(self, vendor_id: int) -> VendorTerms | None:
        """The vendor's last known terms, of whatever version: a hint for what to read with them."""
        return self._entries.get(vendor_id)

    async def terms(self, conn: AsyncConnection[Any], vendor_id: int, version: int) -> VendorTerms:
        cached = self._entries.get(vendor_id)
        if cached is not None and cached.version == version:
            self._entries.move_to_end(vendor_id)
            return cached
        fresh = await fetch_terms(conn, vendor_id, version)
        self._entries[vendor_id] = fresh
        self._entries.move_to_end(vendor_id)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)
        return fresh
