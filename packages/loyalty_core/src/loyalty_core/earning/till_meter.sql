-- name: reserve
-- params: Reserve
INSERT INTO transaction_meters AS tm (vendor_id, period, used) VALUES (%(vendor_id)s, %(period)s, %(units)s)
ON CONFLICT (vendor_id, period) DO UPDATE SET used = tm.used + %(units)s WHERE tm.used + %(room)s <= %(hard_limit)s
RETURNING tm.used;

-- name: release
-- params: Release
UPDATE transaction_meters SET used = greatest(used - %(units)s, 0)
WHERE vendor_id = %(vendor_id)s AND period = %(period)s;
