-- name: read
-- params: Code
SELECT r.id, r.confirmation_code, r.status AS status, r.reward_id, r.reward_name, r.reward_type,
       r.customer_id, r.points_deducted, b.external_id AS branch_key, b.name AS branch_name,
       b.type AS branch_type, r.redeemed_at, r.expires_at,
       r.used_at AS used_at, r.cancelled_at, r.discount_type, r.discount_value, r.product_reference,
       r.payment_amount
FROM redemptions r
LEFT JOIN branches b ON b.vendor_id = r.vendor_id AND b.id = r.branch_id
WHERE r.vendor_id = %(vendor_id)s AND r.confirmation_code = %(code)s;

-- name: read_shown
-- params: Code
SELECT r.id, r.confirmation_code, r.status AS status, r.reward_id, r.reward_name, r.reward_type,
       r.customer_id, r.points_deducted, b.external_id AS branch_key, b.name AS branch_name,
       b.type AS branch_type, r.redeemed_at, r.expires_at,
       r.used_at AS used_at, r.cancelled_at, r.discount_type, r.discount_value, r.product_reference,
       r.payment_amount
FROM redemptions r
LEFT JOIN branches b ON b.vendor_id = r.vendor_id AND b.id = r.branch_id
WHERE r.vendor_id = %(vendor_id)s AND r.confirmation_code = %(code)s
  AND EXISTS (
      SELECT 1 FROM customers c
      WHERE c.vendor_id = r.vendor_id AND c.id = r.customer_id AND c.status <> 'anonymized'
  );

-- name: verify
-- params: VerifyAlone
WITH moved AS (
    UPDATE redemptions r SET status = 'used', used_at = %(now)s, updated_at = %(now)s
    WHERE r.vendor_id = %(vendor_id)s AND r.confirmation_code = %(code)s AND r.status = 'valid'
      AND (r.expires_at IS NULL OR r.expires_at > %(now)s)
      AND EXISTS (
          SELECT 1 FROM customers c
          WHERE c.vendor_id = r.vendor_id AND c.id = r.customer_id AND c.status <> 'anonymized'
      )
    RETURNING r.id, r.status, r.used_at, r.confirmation_code, r.reward_id, r.reward_name, r.reward_type,
              r.customer_id, r.points_deducted, r.branch_id, r.vendor_id, r.redeemed_at, r.expires_at,
              r.cancelled_at, r.discount_type, r.discount_value, r.product_reference, r.payment_amount
), used_event_recorded AS (
    INSERT INTO events (vendor_id, id, type, payload_version, created_at, customer_id, data)
    SELECT m.vendor_id, CAST(%(used_event_id)s AS text), 'redemption.used', 1,
           %(now)s, m.customer_id,
           jsonb_build_array(m.id, m.confirmation_code, m.status, m.reward_id, m.reward_name, m.reward_type, m.customer_id, m.points_deducted, m.redeemed_at, m.expires_at, m.used_at, m.cancelled_at, m.discount_type, m.discount_value, m.product_reference, m.payment_amount, ub.external_id, ub.name, ub.type)
    FROM moved m LEFT JOIN branches ub ON ub.vendor_id = m.vendor_id AND ub.id = m.branch_id
    RETURNING vendor_id, id, type, created_at
), used_event_deliveries AS (
    INSERT INTO webhook_deliveries
        (id, vendor_id, endpoint_id, event_id, attempt, status, next_attempt_at, created_at, updated_at)
    SELECT nextval('webhook_deliveries_id_seq'), w.vendor_id, w.id, e.id, 1, 'pending',
           e.created_at, e.created_at, e.created_at
    FROM used_event_recorded e
    JOIN webhook_endpoints w ON w.vendor_id = e.vendor_id
    WHERE w.enabled AND (e.type = ANY (w.events) OR '*' = ANY (w.events))
    RETURNING 1
)
SELECT m.id IS NOT NULL AS moved, (SELECT count(*) FROM used_event_deliveries) AS deliveries, r.id, r.confirmation_code, coalesce(m.status, r.status) AS status, r.reward_id, r.reward_name, r.reward_type,
       r.customer_id, r.points_deducted, b.external_id AS branch_key, b.name AS branch_name,
       b.type AS branch_type, r.redeemed_at, r.expires_at,
       coalesce(m.used_at, r.used_at) AS used_at, r.cancelled_at, r.discount_type, r.discount_value, r.product_reference,
       r.payment_amount
FROM redemptions r
LEFT JOIN branches b ON b.vendor_id = r.vendor_id AND b.id = r.branch_id
LEFT JOIN moved m ON m.id = r.id
WHERE r.vendor_id = %(vendor_id)s AND r.confirmation_code = %(code)s;

-- name: verify_riding
-- params: Verify, TokenCheck
WITH moved AS (
    UPDATE redemptions r SET status = 'used', used_at = %(now)s, updated_at = %(now)s
    WHERE r.vendor_id = %(vendor_id)s AND r.confirmation_code = %(code)s AND r.status = 'valid'
      AND (r.expires_at IS NULL OR r.expires_at > %(now)s)
      AND EXISTS (
          SELECT 1 FROM customers c
          WHERE c.vendor_id = r.vendor_id AND c.id = r.customer_id AND c.status <> 'anonymized'
      )
      AND EXISTS (
    SELECT 1 FROM issued_tokens gt
    JOIN api_clients gc ON gc.id = gt.api_client_id
    JOIN vendors gv ON gv.id = gc.vendor_id
    WHERE gt.jti = %(jti)s AND NOT gt.revoked AND gt.expires_at > %(now)s AND gc.revoked_at IS NULL
      AND gc.vendor_id = %(vendor_id)s AND 'client_credentials' = ANY(gc.grant_types)
      AND 'write' = ANY(gc.scopes)
      AND gv.status = 'active' AND (gv.subscription_ends_at IS NULL OR gv.subscription_ends_at > %(now)s)
)
    RETURNING r.id, r.status, r.used_at, r.confirmation_code, r.reward_id, r.reward_name, r.reward_type,
              r.customer_id, r.points_deducted, r.branch_id, r.vendor_id, r.redeemed_at, r.expires_at,
              r.cancelled_at, r.discount_type, r.discount_value, r.product_reference, r.payment_amount
), used_event_recorded AS (
    INSERT INTO events (vendor_id, id, type, payload_version, created_at, customer_id, data)
    SELECT m.vendor_id, CAST(%(used_event_id)s AS text), 'redemption.used', 1,
           %(now)s, m.customer_id,
           jsonb_build_array(m.id, m.confirmation_code, m.status, m.reward_id, m.reward_name, m.reward_type, m.customer_id, m.points_deducted, m.redeemed_at, m.expires_at, m.used_at, m.cancelled_at, m.discount_type, m.discount_value, m.product_reference, m.payment_amount, ub.external_id, ub.name, ub.type)
    FROM moved m LEFT JOIN branches ub ON ub.vendor_id = m.vendor_id AND ub.id = m.branch_id
    RETURNING vendor_id, id, type, created_at
), used_event_deliveries AS (
    INSERT INTO webhook_deliveries
        (id, vendor_id, endpoint_id, event_id, attempt, status, next_attempt_at, created_at, updated_at)
    SELECT nextval('webhook_deliveries_id_seq'), w.vendor_id, w.id, e.id, 1, 'pending',
           e.created_at, e.created_at, e.created_at
    FROM used_event_recorded e
    JOIN webhook_endpoints w ON w.vendor_id = e.vendor_id
    WHERE w.enabled AND (e.type = ANY (w.events) OR '*' = ANY (w.events))
    RETURNING 1
)
SELECT a.*, q.* FROM (
SELECT p.max_transactions, p.max_customers, p.max_rewards, p.max_campaigns, p.max_locations,
       p.rate_limit_per_minute, p.overage_percent,
       p.feature_campaigns, p.feature_customer_moments, p.feature_point_expiry, p.feature_tiers,
       t.revoked, t.expires_at,
       c.id, c.client_id, c.revoked_at, c.vendor_id, c.scopes, c.grant_types, c.platform,
       v.id, v.status, v.suspended_grace_until, v.subscription_ends_at, v.points_expire_after_days,
       b.id, b.external_id, b.name, b.type, b.active
FROM issued_tokens t
JOIN api_clients c ON c.id = t.api_client_id
LEFT JOIN vendors v ON v.id = %(vendor_id)s
LEFT JOIN plans p ON p.id = v.plan_id
LEFT JOIN branches b ON b.id = c.default_branch_id
WHERE t.jti = %(jti)s
) a LEFT JOIN LATERAL (SELECT EXISTS (
    SELECT 1 FROM issued_tokens gt
    JOIN api_clients gc ON gc.id = gt.api_client_id
    JOIN vendors gv ON gv.id = gc.vendor_id
    WHERE gt.jti = %(jti)s AND NOT gt.revoked AND gt.expires_at > %(now)s AND gc.revoked_at IS NULL
      AND gc.vendor_id = %(vendor_id)s AND 'client_credentials' = ANY(gc.grant_types)
      AND 'write' = ANY(gc.scopes)
      AND gv.status = 'active' AND (gv.subscription_ends_at IS NULL OR gv.subscription_ends_at > %(now)s)
) AS write_admitted, m.id IS NOT NULL AS moved, (SELECT count(*) FROM used_event_deliveries) AS deliveries, r.id, r.confirmation_code, coalesce(m.status, r.status) AS status, r.reward_id, r.reward_name, r.reward_type,
       r.customer_id, r.points_deducted, b.external_id AS branch_key, b.name AS branch_name,
       b.type AS branch_type, r.redeemed_at, r.expires_at,
       coalesce(m.used_at, r.used_at) AS used_at, r.cancelled_at, r.discount_type, r.discount_value, r.product_reference,
       r.payment_amount
FROM redemptions r
LEFT JOIN branches b ON b.vendor_id = r.vendor_id AND b.id = r.branch_id
LEFT JOIN moved m ON m.id = r.id
WHERE r.vendor_id = %(vendor_id)s AND r.confirmation_code = %(code)s) q ON true;
