-- name: token_check
-- params: TokenCheck
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
WHERE t.jti = %(jti)s;

-- name: vendor_state
-- params: VendorScope
SELECT v.status, v.suspended_grace_until, v.subscription_ends_at, p.rate_limit_per_minute
FROM vendors v JOIN plans p ON p.id = v.plan_id
WHERE v.id = %(vendor_id)s;
