-- name: transaction_by_id
-- params: TransactionById
SELECT t.id, t.customer_id, t.idempotency_key, t.total_amount, t.description, t.external_reference,
       b.id AS branch_id, b.external_id AS branch_key, b.name AS branch_name, b.type AS branch_type,
       b.active AS branch_active, t.created_at, t.points_earned, t.rules_applied, t.returned_amount,
       t.points_reversed, t.points_available_at,
       (SELECT json_agg(json_build_array(i.id, i.name, i.sku, i.quantity, i.unit_price, i.line_total, i.category)
                        ORDER BY i.position)
          FROM transaction_items i WHERE i.transaction_id = t.id) AS items
FROM transactions t
LEFT JOIN branches b ON b.vendor_id = t.vendor_id AND b.id = t.branch_id
WHERE t.vendor_id = %(vendor_id)s AND t.id = %(transaction_id)s;

-- name: customer_transactions
-- params: CustomerTransactions
WITH RECURSIVE family(id) AS (
    SELECT id FROM customers
    WHERE vendor_id = %(vendor_id)s AND id = %(customer_id)s AND status <> 'anonymized'
    UNION
    SELECT c.id FROM customers c JOIN family f ON c.vendor_id = %(vendor_id)s AND c.merged_into_id = f.id
), chosen AS MATERIALIZED (
    SELECT t.* FROM family f
    JOIN transactions t ON t.vendor_id = %(vendor_id)s AND t.customer_id = f.id
    WHERE (%(created_from)s::timestamptz IS NULL OR t.created_at >= %(created_from)s)
      AND (%(created_to)s::timestamptz IS NULL OR t.created_at <= %(created_to)s)
      AND (%(created_before)s::timestamptz IS NULL OR t.created_at < %(created_before)s)
)

SELECT t.id, t.customer_id, t.idempotency_key, t.total_amount, t.description, t.external_reference,
       b.id AS branch_id, b.external_id AS branch_key, b.name AS branch_name, b.type AS branch_type,
       b.active AS branch_active, t.created_at, t.points_earned, t.rules_applied, t.returned_amount,
       t.points_reversed, t.points_available_at,
       (SELECT json_agg(json_build_array(i.id, i.name, i.sku, i.quantity, i.unit_price, i.line_total, i.category)
                        ORDER BY i.position)
          FROM transaction_items i WHERE i.transaction_id = t.id) AS items
, (SELECT count(*) FROM chosen) AS total, (SELECT count(*) FROM family) AS known
FROM (SELECT 1) one
LEFT JOIN LATERAL (
    SELECT * FROM chosen ORDER BY created_at DESC, id DESC OFFSET %(offset)s LIMIT %(limit)s
) t ON true
LEFT JOIN branches b ON b.vendor_id = t.vendor_id AND b.id = t.branch_id
ORDER BY t.created_at DESC, t.id DESC;

-- name: transaction_shown
-- params: TransactionById
SELECT t.id, t.customer_id, t.idempotency_key, t.total_amount, t.description, t.external_reference,
       b.id AS branch_id, b.external_id AS branch_key, b.name AS branch_name, b.type AS branch_type,
       b.active AS branch_active, t.created_at, t.points_earned, t.rules_applied, t.returned_amount,
       t.points_reversed, t.points_available_at,
       (SELECT json_agg(json_build_array(i.id, i.name, i.sku, i.quantity, i.unit_price, i.line_total, i.category)
                        ORDER BY i.position)
          FROM transaction_items i WHERE i.transaction_id = t.id) AS items
FROM transactions t
JOIN customers c ON c.vendor_id = t.vendor_id AND c.id = t.customer_id AND c.status <> 'anonymized'
LEFT JOIN branches b ON b.vendor_id = t.vendor_id AND b.id = t.branch_id
WHERE t.vendor_id = %(vendor_id)s AND t.id = %(transaction_id)s;
