-- name: by_identifier
-- params: ByIdentifier, VendorScope
WITH found AS MATERIALIZED (
    SELECT customer_id FROM customer_identifiers
    WHERE vendor_id = %(vendor_id)s AND lower(value) = lower(%(identifier)s) AND active AND customer_id IS NOT NULL
), holder AS MATERIALIZED (
    SELECT coalesce(c.merged_into_id, c.id) AS id
    FROM found f JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = f.customer_id
    WHERE c.status <> 'anonymized'
)
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
FROM holder h
JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = h.id
LEFT JOIN wallets w ON w.vendor_id = c.vendor_id AND w.customer_id = c.id
WHERE c.status <> 'anonymized';

-- name: by_external_id
-- params: ByExternalId, VendorScope
WITH holder AS MATERIALIZED (
    SELECT id FROM customers WHERE vendor_id = %(vendor_id)s AND external_id = %(external_id)s
)
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
FROM holder h
JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = h.id
LEFT JOIN wallets w ON w.vendor_id = c.vendor_id AND w.customer_id = c.id
WHERE c.status <> 'anonymized';

-- name: by_identifier_riding
-- params: ByIdentifier, TokenCheck
SELECT a.*, q.* FROM (
SELECT p.max_transactions, p.max_customers, p.max_rewards, p.max_campaigns, p.max_locations,
       p.rate_limit_per_minute, p.overage_percent,
       p.feature_campaigns, p.feature_customer_moments, p.feature_point_expiry, p.feature_tiers,
       t.revoked, t.expires_at,
       c.id, c.client_id, c.revoked_at, c.vendor_id, c.scopes, c.grant_types, c.platform,
       v.id, v.status, v.suspended_grace_until, v.subscription_ends_at, v.points_expire_after_days,
       b.id, b.external_id, b.name, b.type, b.active, v.pending_days
FROM issued_tokens t
JOIN api_clients c ON c.id = t.api_client_id
LEFT JOIN vendors v ON v.id = %(vendor_id)s
LEFT JOIN plans p ON p.id = v.plan_id
LEFT JOIN branches b ON b.id = c.default_branch_id
WHERE t.jti = %(jti)s
) a LEFT JOIN LATERAL (
WITH found AS MATERIALIZED (
    SELECT customer_id FROM customer_identifiers
    WHERE vendor_id = %(vendor_id)s AND lower(value) = lower(%(identifier)s) AND active AND customer_id IS NOT NULL
), holder AS MATERIALIZED (
    SELECT coalesce(c.merged_into_id, c.id) AS id
    FROM found f JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = f.customer_id
    WHERE c.status <> 'anonymized'
)
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
FROM holder h
JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = h.id
LEFT JOIN wallets w ON w.vendor_id = c.vendor_id AND w.customer_id = c.id
WHERE c.status <> 'anonymized'
) q ON true;

-- name: by_external_id_riding
-- params: ByExternalId, TokenCheck
SELECT a.*, q.* FROM (
SELECT p.max_transactions, p.max_customers, p.max_rewards, p.max_campaigns, p.max_locations,
       p.rate_limit_per_minute, p.overage_percent,
       p.feature_campaigns, p.feature_customer_moments, p.feature_point_expiry, p.feature_tiers,
       t.revoked, t.expires_at,
       c.id, c.client_id, c.revoked_at, c.vendor_id, c.scopes, c.grant_types, c.platform,
       v.id, v.status, v.suspended_grace_until, v.subscription_ends_at, v.points_expire_after_days,
       b.id, b.external_id, b.name, b.type, b.active, v.pending_days
FROM issued_tokens t
JOIN api_clients c ON c.id = t.api_client_id
LEFT JOIN vendors v ON v.id = %(vendor_id)s
LEFT JOIN plans p ON p.id = v.plan_id
LEFT JOIN branches b ON b.id = c.default_branch_id
WHERE t.jti = %(jti)s
) a LEFT JOIN LATERAL (
WITH holder AS MATERIALIZED (
    SELECT id FROM customers WHERE vendor_id = %(vendor_id)s AND external_id = %(external_id)s
)
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
FROM holder h
JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = h.id
LEFT JOIN wallets w ON w.vendor_id = c.vendor_id AND w.customer_id = c.id
WHERE c.status <> 'anonymized'
) q ON true;
