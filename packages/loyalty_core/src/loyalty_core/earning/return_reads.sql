-- name: return_by_id
-- params: ReturnById
SELECT r.id, r.transaction_id, r.idempotency_key, r.amount, r.items, r.reason, r.points_reversed,
       r.points_unrecovered, r.created_at, b.id AS branch_id, b.external_id AS branch_key, b.name AS branch_name,
       b.type AS branch_type, b.active AS branch_active
FROM transaction_returns r
LEFT JOIN branches b ON b.vendor_id = r.vendor_id AND b.id = r.branch_id
WHERE r.vendor_id = %(vendor_id)s AND r.id = %(return_id)s;

-- name: purchase_returns
-- params: PurchaseReturns
WITH purchase AS MATERIALIZED (
    SELECT t.id FROM transactions t
    JOIN customers c ON c.vendor_id = t.vendor_id AND c.id = t.customer_id
         AND c.status <> 'anonymized'
    WHERE t.vendor_id = %(vendor_id)s AND t.id = %(transaction_id)s
)
SELECT r.id, r.transaction_id, r.idempotency_key, r.amount, r.items, r.reason, r.points_reversed,
       r.points_unrecovered, r.created_at, b.id AS branch_id, b.external_id AS branch_key, b.name AS branch_name,
       b.type AS branch_type, b.active AS branch_active
, (SELECT count(*) FROM transaction_returns
          WHERE vendor_id = %(vendor_id)s AND transaction_id IN (SELECT id FROM purchase)) AS total,
       (SELECT count(*) FROM purchase) AS known
FROM (SELECT 1) one
LEFT JOIN LATERAL (
    SELECT * FROM transaction_returns
    WHERE vendor_id = %(vendor_id)s AND transaction_id IN (SELECT id FROM purchase)
    ORDER BY id OFFSET %(offset)s LIMIT %(limit)s
) r ON true
LEFT JOIN branches b ON b.vendor_id = r.vendor_id AND b.id = r.branch_id
ORDER BY r.id;
