-- name: holder_wallet_lock
-- params: HolderParams
WITH found AS MATERIALIZED (
    SELECT customer_id FROM customer_identifiers
    WHERE vendor_id = %(vendor_id)s AND lower(value) = lower(%(identifier)s) AND active AND customer_id IS NOT NULL
), holder AS MATERIALIZED (
    SELECT coalesce(c.merged_into_id, c.id) AS id
    FROM found f JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = f.customer_id
    WHERE c.status <> 'anonymized'
)
SELECT w.id AS wallet_id FROM holder h
JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = h.id AND c.status <> 'anonymized'
JOIN wallets w ON w.vendor_id = %(vendor_id)s AND w.customer_id = c.id
FOR UPDATE OF w;
