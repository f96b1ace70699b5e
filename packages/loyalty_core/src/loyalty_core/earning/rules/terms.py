"""The engine's inputs: a purchase, what is known of its customer, and the terms of each rule.

Plain frozen values, so the engine can be called by any app without a database, and a rule's
terms can be cached by their version and shared across requests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from enum import StrEnum
from typing import Final, Generic, TypeVar


class Family(StrEnum):
    """A campaign's family: paid on a purchase, or on a moment in the customer's life."""

    TRANSACTION = "transaction"
    CUSTOMER_MOMENT = "customer_moment"


class Moment(StrEnum):
    BIRTHDAY = "birthday"
    ANNIVERSARY = "anniversary"
    WIN_BACK = "win_back"


class Kind(StrEnum):
    MULTIPLIER = "multiplier"
    FIXED_POINTS = "fixed_points"
    PRODUCT_POINTS = "product_points"


FAMILIES: Final = tuple(Family)
MOMENTS: Final = tuple(Moment)
KINDS: Final = tuple(Kind)


@dataclass(frozen=True, slots=True)
class LineItem:
    """One line of the purchase; only what scoring needs."""

    quantity: int
    sku: str | None = None


@dataclass(frozen=True, slots=True)
class Purchase:
    total_amount: int
    """Euro cents."""
    branch: str | None = None
    """The branch's ``external_id`` after the branch chain; None for an unattributed purchase."""
    items: tuple[LineItem, ...] = ()


@dataclass(frozen=True, slots=True)
class MomentKey:
    """One occurrence of a customer moment: the birthday of one year, one lapse of inactivity.

    ``since`` is the day the occurrence is counted from: the birthday or anniversary in that year,
    or, for ``win_back``, the day of the purchase (or ``customer_since``) that started the lapse.
    """

    moment: str
    since: date


@dataclass(frozen=True, slots=True)
class CustomerFacts:
    """What the moments need to know of the customer (and of its whole merge family).

    ``customer_since`` is the date in force: the caller substitutes the creation date when the
    customer gave none. ``last_purchase_on`` is the UTC day of the latest earlier purchase.
    ``moments_paid`` are the occurrences some purchase was already paid for.
    """

    date_of_birth: date | None = None
    customer_since: date | None = None
    last_purchase_on: date | None = None
    moments_paid: frozenset[MomentKey] = frozenset()


@dataclass(frozen=True, slots=True)
class EarnRuleData:
    """An earn rule as the admin API creates it (EARN-13 bounds it)."""

    name: str
    points_per_unit: int
    unit_amount: int
    min_transaction_amount: int = 0
    active: bool = True


@dataclass(frozen=True, slots=True)
class EarnRuleTerms(EarnRuleData):
    """An earn rule as the engine scores with it: the rule as created, and the id it was given."""

    id: int = field(kw_only=True)


Names = TypeVar("Names", tuple[str, ...], frozenset[str])
"""How a campaign holds its SKUs and branches: as listed when it is created, as a set to score."""


@dataclass(frozen=True, slots=True)
class CampaignFields(Generic[Names]):
    """A campaign's settings; the fields its kind and moment do not use are None."""

    name: str
    kind: str
    family: str = Family.TRANSACTION
    moment: str | None = None
    multiplier: Decimal | None = None
    points: int | None = None
    skus: Names | None = None
    max_points_per_transaction: int | None = None
    window_days: int | None = None
    inactive_days: int | None = None
    combinable: bool = False
    min_transaction_amount: int = 0
    starts_on: date | None = None
    ends_on: date | None = None
    branches: Names | None = None
    """Branch ``external_id``s; None means every branch."""
    active: bool = True


@dataclass(frozen=True, slots=True)
class CampaignData(CampaignFields[tuple[str, ...]]):
    """A whole campaign as the admin API (or the portal) creates it (EARN-13 bounds it); None leaves
    a field unset (the documented defaults otherwise)."""


@dataclass(frozen=True, slots=True)
class CampaignTerms(CampaignFields[frozenset[str]]):
    """A campaign as the engine scores with it: its settings, the id it was given and the version
    held."""

    id: int = field(kw_only=True)
    version: int = field(kw_only=True, default=1)
