-- name: complete
-- params: ReferralComplete
WITH purchase AS (
    SELECT t.id FROM transactions t WHERE t.vendor_id = %(vendor_id)s AND t.idempotency_key = %(idempotency_key)s
), referrer_lock AS (
    SELECT w.id FROM wallets w
    WHERE w.vendor_id = %(vendor_id)s AND w.id = %(referrer_wallet_id)s AND %(pay_referrer)s
    FOR UPDATE
), held AS (
    SELECT r.id, r.referrer_id FROM referrals r
    WHERE r.vendor_id = %(vendor_id)s AND r.id = %(referral_id)s AND r.status = 'pending'
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
    SET status = 'completed', completed_at = %(now)s, referee_points = %(referee_points)s,
        referrer_points = CASE WHEN EXISTS (SELECT 1 FROM payout) THEN %(referrer_points)s ELSE 0 END,
        transaction_id = (SELECT id FROM purchase), updated_at = %(now)s
    FROM held h
    WHERE r.vendor_id = %(vendor_id)s AND r.id = h.id
    RETURNING r.referee_id, r.referrer_id, r.referrer_points, r.referee_points, r.transaction_id
), referral_pending AS (
    INSERT INTO pending_points
        (id, vendor_id, wallet_id, transaction_id, entry_type, points, available_at, lot_expires_at, causer_type,
         causer_id, created_at, updated_at)
    SELECT nextval('pending_points_id_seq'), %(vendor_id)s, p.wallet_id, c.transaction_id, 'referral',
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
), referral_event_recorded AS (
    INSERT INTO events (vendor_id, id, type, payload_version, created_at, customer_id, data)
    SELECT %(vendor_id)s, CAST(%(referral_event_id)s AS text), 'referral.completed', 1,
           %(now)s, x.referee_id,
           CAST(%(referral_event_data)s AS jsonb) || jsonb_build_object('referrer_id', x.referrer_id, 'referrer_points', x.referrer_points, 'transaction_id', x.transaction_id)
    FROM completed x
    RETURNING vendor_id, id, type, created_at
), referral_event_deliveries AS (
    INSERT INTO webhook_deliveries
        (id, vendor_id, endpoint_id, event_id, attempt, status, next_attempt_at, created_at, updated_at)
    SELECT nextval('webhook_deliveries_id_seq'), w.vendor_id, w.id, e.id, 1, 'pending',
           e.created_at, e.created_at, e.created_at
    FROM referral_event_recorded e
    JOIN webhook_endpoints w ON w.vendor_id = e.vendor_id
    WHERE w.enabled AND (e.type = ANY (w.events) OR '*' = ANY (w.events))
    RETURNING 1
)
SELECT x.referrer_id, x.referrer_points, (SELECT count(*) FROM referral_event_deliveries) AS deliveries
FROM completed x;
