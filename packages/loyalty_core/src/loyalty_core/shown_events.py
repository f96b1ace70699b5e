"""The one registry of event types: each type's current payload struct, and how every version of it
stored so far is shown (``events.rules.payloads``). The feed and the deliveries read events through it.

Most events store their payload as the API shows it, and are shown as stored. A till statement that
must stay cheap stores a compact snapshot of the row it moved instead (a JSON array, never an
object), taken in the same statement as the change; its reader makes the resource from it, through
the area's own response shape, each time the event is read or sent, so the snapshot, not the row as
it is now, is what the event shows. This sits above every area because it names their payloads.

A struct that changes takes the next version, and this registry an ``older`` line for the version
before: ``older(VoucherUsed, 1)`` reads those rows into the new struct, a field added since at its
default; ``older(VoucherUsed, 1, read=...)`` reads them by a function of their own.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from loyalty_core.accounts.events import (
    CustomerAnonymized,
    CustomerCreated,
    CustomerMerged,
    CustomerTierChanged,
    CustomerUpdated,
    without_referrals,
    without_tier,
)
from loyalty_core.earning.events import CreatedSnapshot, TransactionReturned, created_event_data
from loyalty_core.events.rules.payloads import Registry, current, older, snapshot_or_stored
from loyalty_core.events.services.endpoints import Ping
from loyalty_core.redemptions.events import RedemptionCancelled, RedemptionCreated, RedemptionUsed
from loyalty_core.redemptions.resources import used_event_data
from loyalty_core.referrals.events import ReferralCompletedEvent
from loyalty_core.vouchers.events import VoucherUsed
from loyalty_core.wallet.events import PointsAdjusted, PointsAvailable, PointsExpired

EVENTS = Registry(
    current(CustomerCreated),
    current(CustomerUpdated),
    current(CustomerMerged),
    current(CustomerAnonymized),
    current(CustomerTierChanged),
    # version 1, before the customer resource had ``tier`` (TIER-6)
    older(CustomerCreated, 1, read=without_tier),
    older(CustomerUpdated, 1, read=without_tier),
    older(CustomerMerged, 1, read=without_tier),
    older(CustomerAnonymized, 1, read=without_tier),
    # before the customer resource had ``referral_code`` and ``referred_by`` (REFERRAL-6)
    older(CustomerCreated, 2, read=without_referrals),
    older(CustomerUpdated, 2, read=without_referrals),
    older(CustomerMerged, 2, read=without_referrals),
    older(CustomerAnonymized, 2, read=without_referrals),
    older(CustomerTierChanged, 1, read=without_referrals),
    # the purchase's snapshot; an object is an event stored as the resource before there was one
    current(CreatedSnapshot, read=snapshot_or_stored(created_event_data)),
    older(CreatedSnapshot, 1, read=snapshot_or_stored(created_event_data)),
    current(TransactionReturned),
    current(PointsAdjusted),
    current(PointsExpired),
    current(PointsAvailable),
    current(RedemptionCreated),
    # the verify's snapshot, or the resource as the portal's give records it
    current(RedemptionUsed, read=snapshot_or_stored(used_event_data)),
    current(RedemptionCancelled),
    current(VoucherUsed),
    current(ReferralCompletedEvent),
    current(Ping),
)


def shown_data(event_type: str, version: int, data: Any, at: datetime) -> dict[str, Any]:
    """``data`` as stored for an event of ``event_type`` in payload ``version``, recorded at ``at``,
    as the API shows it."""
    return EVENTS.shown(event_type, version, data, at)
