"""The redemption rules both paths decide with: the till's prepared statements (``till_redeem``)
and the portal's give and cancel on the ORM session (``services``). Values in, a refusal or a value
out; each path reads the facts its own way, under the wallet's lock. And the confirmation codes:
the vendor's four-letter prefix, a hyphen, 8 readable characters (A-Z 0-9 without look-alikes) from
a cryptographic source."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any, Protocol

from loyalty_core.random_text import READABLE as ALPHABET
from loyalty_core.random_text import random_text
from loyalty_core.redemptions import errors as e
from loyalty_core.redemptions.models import StoredStatus
from loyalty_core.rewards.models import RewardStatus
from loyalty_core.tiers.rules import reaches
from loyalty_core.tiers.till_months import ladder_from_read, standing_from_read
from loyalty_core.wallet.rules import Take

NOT_COUNTED = StoredStatus.CANCELLED
"""A cancelled redemption gave its points and stock back: it no longer counts towards the
customer's limit for the reward (every other status does)."""


class Window(Protocol):
    """What decides whether a reward can be redeemed now: a ``Reward`` row, or the till's read of one."""

    @property
    def id(self) -> int: ...
    @property
    def deleted_at(self) -> datetime | None: ...
    @property
    def status(self) -> str: ...
    @property
    def available_from(self) -> date | None: ...
    @property
    def available_until(self) -> date | None: ...


def check_available(reward: Window, now: datetime) -> None:
    """Deleted, inactive or out of its window (whole UTC dates, inclusive): REWARD_UNAVAILABLE."""
    today = now.date()
    if (
        reward.deleted_at is not None
        or reward.status != RewardStatus.ACTIVE
        or (reward.available_from is not None and today < reward.available_from)
        or (reward.available_until is not None and today > reward.available_until)
    ):
        raise e.RewardUnavailable("The reward cannot be redeemed now.", reward_id=reward.id)


def check_tier(reward_id: int, min_tier: str, read: Any, now: datetime) -> None:
    """TIER-12, right after the branch: a customer below the reward's ``min_tier`` is refused.
    ``read``: the tier's facts (``tiers.till_months.tier_facts``)."""
    ladder, standing = ladder_from_read(read), standing_from_read(read, now)
    rungs = ladder.rungs if ladder is not None else ()
    if not reaches(rungs, standing.rung.key if standing is not None else None, min_tier):
        raise e.TierRequired(
            "The customer's tier does not reach the reward's min_tier.", reward_id=reward_id, min_tier=min_tier
        )


def check_limit(limit: int | None, held: int) -> None:
    """``held``: the customer's redemptions of the reward that count (all but :data:`NOT_COUNTED`)."""
    if limit is not None and held >= limit:
        raise e.RedemptionLimitReached("The customer reached this reward's limit.", limit=limit)


def check_stock(reward_id: int, total_stock: int | None, remaining_stock: int | None) -> None:
    """A reward with a stock needs one left; the write then takes it with a conditional update that
    never passes 0, so of racing redemptions only those that found one succeed."""
    if total_stock is not None and (remaining_stock or 0) <= 0:
        raise e.OutOfStock("The reward is out of stock.", reward_id=reward_id)


def code_expiry(now: datetime, valid_for_hours: int | None) -> datetime | None:
    """A code valid for N hours ends N hours after its redemption; no setting means it never ends."""
    return now + timedelta(hours=valid_for_hours) if valid_for_hours else None


def consumed_lots(takes: Iterable[Take], ends: Mapping[int, datetime | None]) -> list[list[object]]:
    """What a redemption records of the lots it consumed, ``[points, end]`` with the end in UTC ISO
    form (or null), so a cancel can give the points back with their own end dates."""
    return [[t.points, _iso(ends[t.lot_id])] for t in takes]


def _iso(at: datetime | None) -> str | None:
    return None if at is None else at.astimezone(UTC).isoformat()


def new_code(prefix: str) -> str:
    return prefix + "-" + random_text(ALPHABET, 8)
