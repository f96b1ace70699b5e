-- name: key_lock
-- params: RedeemRead
SELECT pg_advisory_xact_lock(%(vendor_id)s::int, hashtext('redemption:' || %(idempotency_key)s));

-- name: state
-- params: RedeemRead
WITH found AS MATERIALIZED (
    SELECT customer_id FROM customer_identifiers
    WHERE vendor_id = %(vendor_id)s AND lower(value) = lower(%(identifier)s) AND active AND customer_id IS NOT NULL
), holder AS MATERIALIZED (
    SELECT coalesce(c.merged_into_id, c.id) AS id
    FROM found f JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = f.customer_id
    WHERE c.status <> 'anonymized'
)
SELECT c.id AS customer_id, c.status AS customer_status, w.id AS wallet_id, w.balance, w.pending_next_at,
       r.id AS reward_id, r.deleted_at, r.status, r.available_from, r.available_until, r.point_cost, r.total_stock,
       r.remaining_stock, r.max_redemptions_per_customer, r.code_valid_for_hours, r.name, r.type,
       r.discount_type, r.discount_value, r.product_reference, r.payment_amount, r.min_tier,
       CASE WHEN r.min_tier IS NOT NULL THEN (SELECT json_build_array(
        (extract(year FROM date_trunc('month', (%(now)s)::timestamptz AT TIME ZONE 'UTC')) * 12 + extract(month FROM date_trunc('month', (%(now)s)::timestamptz AT TIME ZONE 'UTC')) - 1)::int,
        l.basis, l.period_months, l.grace_months, (SELECT json_agg(json_build_array(r.id, r.key, r.name, r.threshold, r.multiplier_percent)
                  ORDER BY r.position)
             FROM tiers r WHERE r.vendor_id = l.vendor_id AND r.ladder_id = l.id),
        (SELECT json_agg(json_build_array(
                    (extract(year FROM m.month) * 12 + extract(month FROM m.month) - 1)::int, m.spend, m.points))
           FROM (SELECT c.id AS id UNION ALL
                 SELECT f.id FROM customers f WHERE f.vendor_id = l.vendor_id AND f.merged_into_id = c.id) fam
           CROSS JOIN LATERAL (
                SELECT t.month, t.spend, t.points FROM tier_months t
                 WHERE t.vendor_id = l.vendor_id AND t.customer_id = fam.id
                   AND t.month >= (date_trunc('month', (%(now)s)::timestamptz AT TIME ZONE 'UTC') - make_interval(months => l.period_months + l.grace_months))::date
                   AND t.month <= date_trunc('month', (%(now)s)::timestamptz AT TIME ZONE 'UTC')::date
                OFFSET 0) m))
      FROM tier_ladders l
      JOIN vendors v ON v.id = l.vendor_id
      JOIN plans p ON p.id = v.plan_id AND p.feature_tiers
     WHERE l.vendor_id = %(vendor_id)s AND c.merged_into_id IS NULL) END AS tier,
       (SELECT array_agg(rb.branch_id) FROM reward_branches rb
         WHERE rb.vendor_id = %(vendor_id)s AND rb.reward_id = r.id) AS reward_branches,
       CASE WHEN r.max_redemptions_per_customer IS NOT NULL THEN
         (SELECT count(*) FROM redemptions x
           WHERE x.vendor_id = %(vendor_id)s AND x.customer_id = c.id AND x.reward_id = r.id
             AND x.status <> %(not_counted)s)
       END AS held,
       b.id AS branch_id, b.external_id AS branch_key, b.name AS branch_name, b.type AS branch_type,
       b.active AS branch_active,
       p.id AS earlier_id, p.customer_id AS earlier_customer_id, p.reward_id AS earlier_reward_id,
       p.points_deducted AS earlier_points, p.confirmation_code AS earlier_code,
       p.remaining_balance AS earlier_remaining,
       vendor.code_prefix, lots.ids AS lot_ids, lots.ends AS lot_ends, lots.rems AS lot_remaining
FROM (SELECT code_prefix FROM vendors WHERE id = %(vendor_id)s) vendor
LEFT JOIN holder h ON true
LEFT JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = h.id AND c.status <> 'anonymized'
LEFT JOIN wallets w ON w.vendor_id = %(vendor_id)s AND w.customer_id = c.id
LEFT JOIN rewards r ON r.vendor_id = %(vendor_id)s AND r.id = %(reward_id)s
LEFT JOIN branches b ON b.vendor_id = %(vendor_id)s AND b.id = coalesce(
    (SELECT k.id FROM branches k WHERE k.vendor_id = %(vendor_id)s AND k.external_id = %(branch_key)s),
    %(default_branch_id)s)
LEFT JOIN redemptions p ON p.vendor_id = %(vendor_id)s AND p.idempotency_key = %(idempotency_key)s
LEFT JOIN LATERAL (
    SELECT array_agg(l.id) AS ids, array_agg(l.expires_at) AS ends, array_agg(l.remaining) AS rems
    FROM point_lots l WHERE l.wallet_id = w.id AND l.remaining > 0
) lots ON true;
