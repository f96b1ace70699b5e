-- name: key_lock
-- params: PurchaseFind
SELECT pg_advisory_xact_lock(%(vendor_id)s::int, hashtext('transaction:' || %(idempotency_key)s));

-- name: find
-- params: PurchaseFind
WITH RECURSIVE found AS MATERIALIZED (
    SELECT customer_id FROM customer_identifiers
    WHERE vendor_id = %(vendor_id)s AND lower(value) = lower(%(identifier)s) AND active AND customer_id IS NOT NULL
), holder AS MATERIALIZED (
    SELECT coalesce(c.merged_into_id, c.id) AS id
    FROM found f JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = f.customer_id
    WHERE c.status <> 'anonymized'
)
SELECT vendor.earning_version, c.id AS customer_id, c.status, c.date_of_birth,
       coalesce(c.customer_since, (c.created_at AT TIME ZONE 'UTC')::date) AS customer_since, w.id AS wallet_id,
       w.pending_next_at,
       b.id AS branch_id, b.external_id AS branch_key, b.name AS branch_name, b.type AS branch_type,
       b.active AS branch_active, t.id AS earlier_id, t.customer_id AS earlier_customer_id,
       t.total_amount AS earlier_total,
       (SELECT json_build_array(
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
     WHERE l.vendor_id = %(vendor_id)s AND c.merged_into_id IS NULL) AS tier,
       CASE WHEN c.referred_by_id IS NOT NULL THEN (
        SELECT json_build_array(r.id, r.referrer_id, rc.status, rw.id, g.referrer_points, g.referee_points,
                                g.min_purchase_amount, g.max_referrals_per_customer, g.active)
          FROM referrals r
          JOIN referral_programmes g ON g.vendor_id = r.vendor_id
          JOIN vendors v ON v.id = r.vendor_id
          JOIN plans p ON p.id = v.plan_id AND p.feature_referrals
          LEFT JOIN customers rc ON rc.vendor_id = r.vendor_id AND rc.id = r.referrer_id
          LEFT JOIN wallets rw ON rw.vendor_id = r.vendor_id AND rw.customer_id = r.referrer_id
         WHERE r.vendor_id = %(vendor_id)s AND r.referee_id = c.id AND r.status = 'pending'
       ) END AS referral
FROM (SELECT earning_version FROM vendors WHERE id = %(vendor_id)s) vendor
LEFT JOIN holder h ON true
LEFT JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = h.id AND c.status <> 'anonymized'
LEFT JOIN wallets w ON w.vendor_id = %(vendor_id)s AND w.customer_id = c.id
LEFT JOIN branches b ON b.vendor_id = %(vendor_id)s AND b.external_id = %(branch_key)s
LEFT JOIN transactions t ON t.vendor_id = %(vendor_id)s AND t.idempotency_key = %(idempotency_key)s;

-- name: find_with_facts
-- params: PurchaseFind
WITH RECURSIVE found AS MATERIALIZED (
    SELECT customer_id FROM customer_identifiers
    WHERE vendor_id = %(vendor_id)s AND lower(value) = lower(%(identifier)s) AND active AND customer_id IS NOT NULL
), holder AS MATERIALIZED (
    SELECT coalesce(c.merged_into_id, c.id) AS id
    FROM found f JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = f.customer_id
    WHERE c.status <> 'anonymized'
), family(id) AS (
    SELECT id FROM holder
    UNION
    SELECT c.id FROM customers c JOIN family f ON c.vendor_id = %(vendor_id)s AND c.merged_into_id = f.id
)
SELECT vendor.earning_version, c.id AS customer_id, c.status, c.date_of_birth,
       coalesce(c.customer_since, (c.created_at AT TIME ZONE 'UTC')::date) AS customer_since, w.id AS wallet_id,
       w.pending_next_at,
       b.id AS branch_id, b.external_id AS branch_key, b.name AS branch_name, b.type AS branch_type,
       b.active AS branch_active, t.id AS earlier_id, t.customer_id AS earlier_customer_id,
       t.total_amount AS earlier_total,
       (SELECT json_build_array(
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
     WHERE l.vendor_id = %(vendor_id)s AND c.merged_into_id IS NULL) AS tier,
       CASE WHEN c.referred_by_id IS NOT NULL THEN (
        SELECT json_build_array(r.id, r.referrer_id, rc.status, rw.id, g.referrer_points, g.referee_points,
                                g.min_purchase_amount, g.max_referrals_per_customer, g.active)
          FROM referrals r
          JOIN referral_programmes g ON g.vendor_id = r.vendor_id
          JOIN vendors v ON v.id = r.vendor_id
          JOIN plans p ON p.id = v.plan_id AND p.feature_referrals
          LEFT JOIN customers rc ON rc.vendor_id = r.vendor_id AND rc.id = r.referrer_id
          LEFT JOIN wallets rw ON rw.vendor_id = r.vendor_id AND rw.customer_id = r.referrer_id
         WHERE r.vendor_id = %(vendor_id)s AND r.referee_id = c.id AND r.status = 'pending'
       ) END AS referral,
       (SELECT max(t.created_at) FROM family f
          JOIN transactions t ON t.vendor_id = %(vendor_id)s AND t.customer_id = f.id) AS last_purchase_at,
       (SELECT json_agg(json_build_array(m.moment, m.since)) FROM family f
          JOIN customer_moments m ON m.vendor_id = %(vendor_id)s AND m.customer_id = f.id
          WHERE m.state = 'paid') AS moments_paid
FROM (SELECT earning_version FROM vendors WHERE id = %(vendor_id)s) vendor
LEFT JOIN holder h ON true
LEFT JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = h.id AND c.status <> 'anonymized'
LEFT JOIN wallets w ON w.vendor_id = %(vendor_id)s AND w.customer_id = c.id
LEFT JOIN branches b ON b.vendor_id = %(vendor_id)s AND b.external_id = %(branch_key)s
LEFT JOIN transactions t ON t.vendor_id = %(vendor_id)s AND t.idempotency_key = %(idempotency_key)s;

-- name: up_family
-- params: UpFamily
WITH RECURSIVE up(id, next) AS (
    SELECT id, merged_into_id FROM customers WHERE vendor_id = %(vendor_id)s AND id = %(customer_id)s
    UNION
    SELECT c.id, c.merged_into_id FROM customers c JOIN up ON c.vendor_id = %(vendor_id)s AND c.id = up.next
)
SELECT EXISTS (SELECT 1 FROM up WHERE id = %(holder_id)s) AS same;
