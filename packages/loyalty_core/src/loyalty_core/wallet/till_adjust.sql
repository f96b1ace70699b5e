-- name: wallet_lock
-- params: AdjustRead
SELECT w.id AS wallet_id, w.balance, w.pending_next_at
FROM customers c
JOIN wallets w ON w.vendor_id = c.vendor_id AND w.customer_id = c.id
WHERE c.vendor_id = %(vendor_id)s AND c.id = %(customer_id)s AND c.status <> 'anonymized'
FOR UPDATE OF w;

-- name: state_and_key
-- params: AdjustRead, LotsRead
WITH RECURSIVE family(id) AS (
    SELECT %(customer_id)s::bigint
    UNION
    SELECT c.id FROM customers c JOIN family f ON c.vendor_id = %(vendor_id)s AND c.merged_into_id = f.id
), family_wallets AS MATERIALIZED (
    SELECT w.id FROM family f JOIN wallets w ON w.vendor_id = %(vendor_id)s AND w.customer_id = f.id
)
SELECT m.merged_into_id, l.lot_ids, l.lot_ends, l.lot_left, e.*
FROM (SELECT merged_into_id FROM customers WHERE vendor_id = %(vendor_id)s AND id = %(customer_id)s) m
CROSS JOIN LATERAL (
    SELECT array_agg(id ORDER BY id) AS lot_ids, array_agg(expires_at ORDER BY id) AS lot_ends,
           array_agg(remaining ORDER BY id) AS lot_left
    FROM point_lots
    WHERE vendor_id = %(vendor_id)s AND wallet_id = %(wallet_id)s AND remaining > 0
      AND (%(deducting)s OR expires_at <= %(now)s)
) l
LEFT JOIN LATERAL (
    SELECT k.* FROM family_wallets fw
    CROSS JOIN LATERAL (
        SELECT id, wallet_id, type, amount, running_balance, reason, causer_type, causer_id, created_at FROM ledger_entries
        WHERE vendor_id = %(vendor_id)s AND wallet_id = fw.id AND type = 'adjust'
          AND idempotency_key = %(idempotency_key)s
        LIMIT 1
    ) k
    ORDER BY k.id LIMIT 1
) e ON true;

-- name: which_is_missing
-- params: AdjustRead
SELECT 1 FROM customers WHERE vendor_id = %(vendor_id)s AND id = %(customer_id)s AND status <> 'anonymized';
