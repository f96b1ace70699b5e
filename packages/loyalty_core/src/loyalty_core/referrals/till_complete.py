"""A referral's completion (REFERRAL-11 to REFERRAL-17), as one prepared statement sent in the
purchase's second round trip, after its write and before its ``COMMIT``, only by a purchase whose
customer has an open referral that the purchase completes (``rules.completion``); every other
purchase sends nothing more.

In CTEs, locks first, in one order: the referrer's wallet (only when the referrer may be paid), then
the referral's row, still pending and still held by the account round trip 1 read (a merge of the
referrer that committed since moved it: nothing is written and the purchase runs again, ``RunAgain``);
then the referrer's paid count, taken on ``referral_payouts``' row by a conditional upsert (the cap,
exact under concurrency: racing completions of one referrer queue on that row and READ COMMITTED
re-checks ``paid < cap`` on its newest version); the referral completed with the purchase's id and
the points credited; a ``referral`` pending row on each side's wallet (REFERRAL-15: pending as the
purchase's points are, due at the purchase's ``points_available_at``, at once at 0 days, so the
referrer's wallet needs no read: reads count due rows through ``pending_next_at``, PENDING-4, and
the next write or the ``pending-points`` job writes the entry dated its instant); each wallet's
``pending_next_at``; and ``referral.completed`` (REFERRAL-19), also when the referrer got nothing.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final

from loyalty_core.events.services.recording import deliveries_of, dumps, event_ctes, new_event_id, payload_sql
from loyalty_core.referrals.events import ReferralCompletedEvent
from loyalty_core.referrals.models import ReferralStatus
from loyalty_core.referrals.rules import Completion, OpenReferral
from loyalty_core.tenancy.rules.access import VendorContext
from loyalty_core.till_sql import Params, statements_of
from loyalty_core.wallet.models import CauserType, EntryType
from loyalty_core.wallet.rules import lot_expiry

SQL = statements_of(__name__)

EVENT: Final = "referral_event"


class ReferralComplete(Params, frozen=True):
    """The completion's parameters: the referral as round trip 1 read it, what the rule decided,
    the purchase (by its key) and its instants, and the event."""

    vendor_id: int
    referral_id: int
    referrer_id: int
    """The account round trip 1 found holding the referral."""
    referrer_wallet_id: int | None
    referee_wallet_id: int
    pay_referrer: bool
    cap: int
    referee_points: int
    referrer_points: int
    idempotency_key: str
    now: datetime
    available_at: datetime
    lot_ends: datetime | None
    causer_type: str
    causer_id: str | None
    referral_event_id: str
    referral_event_data: str


_COMPLETE_SQL = f"""
WITH purchase AS (
    SELECT t.id FROM transactions t WHERE t.vendor_id = %(vendor_id)s AND t.idempotency_key = %(idempotency_key)s
), referrer_lock AS (
    SELECT w.id FROM wallets w
    WHERE w.vendor_id = %(vendor_id)s AND w.id = %(referrer_wallet_id)s AND %(pay_referrer)s
    FOR UPDATE
), held AS (
    SELECT r.id, r.referrer_id FROM referrals r
    WHERE r.vendor_id = %(vendor_id)s AND r.id = %(referral_id)s AND r.status = '{ReferralStatus.PENDING}'
      AND r.referrer_id = %(referrer_id)s AND EXISTS (SELECT 1 FROM purchase)
      AND (NOT %(pay_referrer)s OR EXISTS (SELECT 1 FROM referrer_lock))
    FOR UPDATE
), payout AS (
    INSERT INTO referral_payouts AS rp (vendor_id, referrer_id, paid)
    SELECT %(vendor_id)s, h.referrer_id, 1 FROM held h WHERE %(pay_referrer)s
    ON CONFLICT (vendor_id, referrer_id) DO UPDATE SET paid = rp.paid + 1
    WHERE %(cap)s = 0 OR rp.paid < %(cap)s
    RETURNING 1
), completed AS (
    UPDATE referrals r
    SET status = '{ReferralStatus.COMPLETED}', completed_at = %(now)s, referee_points = %(referee_points)s,
        referrer_points = CASE WHEN EXISTS (SELECT 1 FROM payout) THEN %(referrer_points)s ELSE 0 END,
        transaction_id = (SELECT id FROM purchase), updated_at = %(now)s
    FROM held h
    WHERE r.vendor_id = %(vendor_id)s AND r.id = h.id
    RETURNING r.referee_id, r.referrer_id, r.referrer_points, r.referee_points, r.transaction_id
), referral_pending AS (
    INSERT INTO pending_points
        (id, vendor_id, wallet_id, transaction_id, entry_type, points, available_at, lot_expires_at, causer_type,
         causer_id, created_at, updated_at)
    SELECT nextval('pending_points_id_seq'), %(vendor_id)s, p.wallet_id, c.transaction_id, '{EntryType.REFERRAL}',
           p.points, %(available_at)s, %(lot_ends)s, %(causer_type)s, %(causer_id)s, %(now)s, %(now)s
    FROM completed c CROSS JOIN LATERAL (
        VALUES (CAST(%(referee_wallet_id)s AS bigint), c.referee_points),
               (CAST(%(referrer_wallet_id)s AS bigint), c.referrer_points)
    ) AS p(wallet_id, points)
    WHERE p.points > 0
    RETURNING wallet_id
), referral_next AS (
    UPDATE wallets SET pending_next_at = least(pending_next_at, %(available_at)s)
    WHERE vendor_id = %(vendor_id)s AND id IN (SELECT wallet_id FROM referral_pending)
), {
    event_ctes(
        EVENT,
        source="completed x",
        data=f"CAST(%({EVENT}_data)s AS jsonb) || jsonb_build_object('referrer_id', x.referrer_id,"
        " 'referrer_points', x.referrer_points, 'transaction_id', x.transaction_id)",
        customer="x.referee_id",
        vendor="%(vendor_id)s",
        at="%(now)s",
        **payload_sql(ReferralCompletedEvent),
    )
}
SELECT x.referrer_id, x.referrer_points, {deliveries_of(EVENT)} AS deliveries
FROM completed x
"""

COMPLETE: Final = SQL("complete", _COMPLETE_SQL, ReferralComplete)


def complete_params(
    vendor: VendorContext,
    referral: OpenReferral,
    decided: Completion,
    *,
    referee_id: int,
    referee_wallet_id: int,
    key: str,
    now: datetime,
) -> ReferralComplete:
    """The statement's parameters: the pending rows are due when the purchase's points are
    (``now`` plus the vendor's ``pending_days``), their lots counted from that instant."""
    available_at = now + timedelta(days=vendor.pending_days)
    shown = ReferralCompletedEvent(
        referee_id=referee_id,
        status=ReferralStatus.COMPLETED,
        completed_at=now,
        referrer_points=0,
        referee_points=decided.referee_points,
        transaction_id=None,
        referrer_id=referral.referrer_id,
    )
    return ReferralComplete(
        vendor_id=vendor.vendor_id,
        referral_id=referral.id,
        referrer_id=referral.referrer_id,
        referrer_wallet_id=referral.referrer_wallet_id,
        referee_wallet_id=referee_wallet_id,
        pay_referrer=decided.pay_referrer,
        cap=decided.cap,
        referee_points=decided.referee_points,
        referrer_points=decided.referrer_points,
        idempotency_key=key,
        now=now,
        available_at=available_at,
        lot_ends=lot_expiry(available_at, vendor.point_expiry_days),
        causer_type=str(CauserType.API_CLIENT),
        causer_id=vendor.client_id,
        referral_event_id=new_event_id(now),
        referral_event_data=dumps(shown),
    )
