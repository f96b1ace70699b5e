-- name: earn_rules
-- params: TermsOf
SELECT id, name, points_per_unit, unit_amount, min_transaction_amount
FROM earn_rules WHERE vendor_id = %(vendor_id)s AND active ORDER BY id;

-- name: campaigns
-- params: TermsOf
SELECT id, name, kind, family, moment, multiplier, points, skus, max_points_per_transaction, window_days,
       inactive_days, combinable, min_transaction_amount, starts_on, ends_on, branches, version
FROM campaigns WHERE vendor_id = %(vendor_id)s AND active ORDER BY id;
