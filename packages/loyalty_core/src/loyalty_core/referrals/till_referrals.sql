-- name: customer_referrals
-- params: CustomerReferrals
WITH known AS MATERIALIZED (
    SELECT id FROM customers
    WHERE vendor_id = %(vendor_id)s AND id = %(customer_id)s AND status <> 'anonymized'
)
SELECT (SELECT count(*) FROM known) AS known,
       (SELECT count(*) FROM referrals n
         WHERE n.vendor_id = %(vendor_id)s AND n.referrer_id = (SELECT id FROM known)) AS total,
       r.referee_id, r.status, r.completed_at, r.referrer_points, r.referee_points, r.transaction_id
FROM (SELECT 1) one
LEFT JOIN LATERAL (
    SELECT r.* FROM known k
    JOIN referrals r ON r.vendor_id = %(vendor_id)s AND r.referrer_id = k.id
    ORDER BY r.id DESC OFFSET %(offset)s LIMIT %(limit)s
) r ON true
ORDER BY r.id DESC;
