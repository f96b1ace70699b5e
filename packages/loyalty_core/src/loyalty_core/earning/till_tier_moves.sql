-- name: customer
-- params: MovedCustomer
SELECT c.id, c.vendor_id, c.first_name, c.last_name, c.email, c.phone, c.date_of_birth,
       c.customer_since, c.external_id, c.locale, c.status, c.merged_into_id, c.marketing_consent,
       c.marketing_consent_statement_version, c.marketing_consent_granted_at, c.marketing_consent_withdrawn_at,
       c.marketing_consent_source, c.marketing_consent_recorded_by, c.created_at, c.updated_at, c.referred_by_id,
       (coalesce(w.balance, 0) - coalesce((
           SELECT sum(l.remaining) FROM point_lots l
           WHERE l.wallet_id = w.id AND l.remaining > 0 AND l.expires_at <= %(now)s), 0)
       + CASE WHEN w.pending_next_at <= %(now)s THEN coalesce((
           SELECT sum(p.points) FROM pending_points p
           WHERE p.vendor_id = w.vendor_id AND p.wallet_id = w.id AND p.available_at <= %(now)s
             AND (p.lot_expires_at IS NULL OR p.lot_expires_at > %(now)s)), 0) ELSE 0 END)::bigint AS balance,
       (SELECT coalesce(json_agg(json_build_array(i.type, i.value, i.active)
                                 ORDER BY i.assigned_at ASC NULLS FIRST, i.id), '[]'::json)
          FROM customer_identifiers i WHERE i.vendor_id = c.vendor_id AND i.customer_id = c.id) AS identifier_list,
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
     WHERE l.vendor_id = c.vendor_id AND c.merged_into_id IS NULL) AS tier_facts,
       EXISTS (SELECT 1 FROM referral_programmes rp
               JOIN vendors rv ON rv.id = rp.vendor_id
               JOIN plans rl ON rl.id = rv.plan_id AND rl.feature_referrals
              WHERE rp.vendor_id = c.vendor_id) AS referral_codes
FROM (SELECT 1) one
JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = %(customer_id)s
     AND c.status <> 'anonymized'
LEFT JOIN wallets w ON w.vendor_id = c.vendor_id AND w.customer_id = c.id;

-- name: lapse
-- params: LapsedCustomer
SELECT c.id, c.vendor_id, c.first_name, c.last_name, c.email, c.phone, c.date_of_birth,
       c.customer_since, c.external_id, c.locale, c.status, c.merged_into_id, c.marketing_consent,
       c.marketing_consent_statement_version, c.marketing_consent_granted_at, c.marketing_consent_withdrawn_at,
       c.marketing_consent_source, c.marketing_consent_recorded_by, c.created_at, c.updated_at, c.referred_by_id,
       (coalesce(w.balance, 0) - coalesce((
           SELECT sum(l.remaining) FROM point_lots l
           WHERE l.wallet_id = w.id AND l.remaining > 0 AND l.expires_at <= %(now)s), 0)
       + CASE WHEN w.pending_next_at <= %(now)s THEN coalesce((
           SELECT sum(p.points) FROM pending_points p
           WHERE p.vendor_id = w.vendor_id AND p.wallet_id = w.id AND p.available_at <= %(now)s
             AND (p.lot_expires_at IS NULL OR p.lot_expires_at > %(now)s)), 0) ELSE 0 END)::bigint AS balance,
       (SELECT coalesce(json_agg(json_build_array(i.type, i.value, i.active)
                                 ORDER BY i.assigned_at ASC NULLS FIRST, i.id), '[]'::json)
          FROM customer_identifiers i WHERE i.vendor_id = c.vendor_id AND i.customer_id = c.id) AS identifier_list,
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
     WHERE l.vendor_id = c.vendor_id AND c.merged_into_id IS NULL) AS tier_facts,
       EXISTS (SELECT 1 FROM referral_programmes rp
               JOIN vendors rv ON rv.id = rp.vendor_id
               JOIN plans rl ON rl.id = rv.plan_id AND rl.feature_referrals
              WHERE rp.vendor_id = c.vendor_id) AS referral_codes,
       l.reviewed_at,
       EXISTS (SELECT 1 FROM events e
                WHERE e.vendor_id = c.vendor_id AND e.customer_id = c.id AND e.type LIKE 'customer.%%'
                  AND e.type = 'customer.tier_changed' AND e.created_at >= %(lapsed_at)s) AS recorded
FROM tier_ladders l
JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = %(customer_id)s
     AND c.status <> 'anonymized'
LEFT JOIN wallets w ON w.vendor_id = c.vendor_id AND w.customer_id = c.id
WHERE l.vendor_id = %(vendor_id)s
FOR SHARE OF l;

-- name: event
-- params: TierEvent
WITH tier_event_recorded AS (
    INSERT INTO events (vendor_id, id, type, payload_version, created_at, customer_id, data)
    SELECT CAST(%(vendor_id)s AS bigint), CAST(%(event_id)s AS text), 'customer.tier_changed', 2,
           CAST(%(now)s AS timestamptz), CAST(%(customer_id)s AS bigint),
           CAST(%(data)s AS jsonb)
    RETURNING vendor_id, id, type, created_at
), tier_event_deliveries AS (
    INSERT INTO webhook_deliveries
        (id, vendor_id, endpoint_id, event_id, attempt, status, next_attempt_at, created_at, updated_at)
    SELECT nextval('webhook_deliveries_id_seq'), w.vendor_id, w.id, e.id, 1, 'pending',
           e.created_at, e.created_at, e.created_at
    FROM tier_event_recorded e
    JOIN webhook_endpoints w ON w.vendor_id = e.vendor_id
    WHERE w.enabled AND (e.type = ANY (w.events) OR '*' = ANY (w.events))
    RETURNING 1
)
SELECT (SELECT count(*) FROM tier_event_deliveries) AS deliveries;
