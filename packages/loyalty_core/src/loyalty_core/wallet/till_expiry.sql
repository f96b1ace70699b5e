-- name: lock
-- params: LockParams
WITH chosen AS (
    SELECT DISTINCT vendor_id, wallet_id FROM (
        SELECT vendor_id, wallet_id FROM point_lots
        WHERE wallet_id > %(after)s AND remaining > 0 AND expires_at <= %(now)s
        ORDER BY wallet_id
        LIMIT %(size)s
    ) due
), locked AS (
    SELECT w.vendor_id, w.id FROM wallets w
    JOIN chosen c ON w.vendor_id = c.vendor_id AND w.id = c.wallet_id
    WHERE w.pending_next_at IS NULL OR w.pending_next_at > %(now)s
    FOR UPDATE OF w SKIP LOCKED
)
SELECT c.last, l.vendor_id, l.id AS wallet_id
FROM (SELECT max(wallet_id) AS last FROM chosen) c LEFT JOIN locked l ON true
ORDER BY l.id;

-- name: due
-- params: DueParams
SELECT w.vendor_id, w.id AS wallet_id, w.customer_id, w.balance, p.expires_at AS ended,
       CAST(sum(p.remaining) AS bigint) AS points
FROM unnest(%(vendor_ids)s::bigint[], %(wallet_ids)s::bigint[]) AS k(vendor_id, wallet_id)
JOIN wallets w ON w.vendor_id = k.vendor_id AND w.id = k.wallet_id
JOIN point_lots p ON p.vendor_id = w.vendor_id AND p.wallet_id = w.id AND p.remaining > 0 AND p.expires_at <= %(now)s
GROUP BY w.vendor_id, w.id, w.customer_id, w.balance, p.expires_at
ORDER BY w.id, p.expires_at;
