-- name: reclaim
-- params: Meter
WITH gone AS (
    DELETE FROM meter_leases WHERE vendor_id = %(vendor_id)s AND id IN (
        SELECT id FROM meter_leases
        WHERE vendor_id = %(vendor_id)s AND expires_at <= now() AND period <= %(period)s
        FOR UPDATE SKIP LOCKED
    )
    RETURNING period
)
UPDATE transaction_meters SET used = greatest(used - (SELECT count(*) FROM gone WHERE period = %(period)s), 0)
WHERE vendor_id = %(vendor_id)s AND period = %(period)s AND EXISTS (SELECT 1 FROM gone WHERE period = %(period)s);

-- name: reserve
-- params: Reserve
WITH meter AS (
    INSERT INTO transaction_meters AS tm (vendor_id, period, used) VALUES (%(vendor_id)s, %(period)s, %(units)s)
    ON CONFLICT (vendor_id, period) DO UPDATE SET used = tm.used + %(units)s WHERE tm.used + %(room)s <= %(hard_limit)s
    RETURNING tm.used
), leased AS (
    INSERT INTO meter_leases (vendor_id, id, period, holder, expires_at)
    SELECT %(vendor_id)s, nextval('meter_leases_id_seq'), %(period)s, %(holder)s, now() + %(lease)s
    FROM meter, generate_series(1, %(units)s)
    RETURNING id
)
SELECT used, (SELECT array_agg(id ORDER BY id) FROM leased) AS lease_ids FROM meter;

-- name: release
-- params: Release
WITH gone AS (
    DELETE FROM meter_leases
    WHERE vendor_id = %(vendor_id)s AND id = ANY(%(lease_ids)s::bigint[]) AND period = %(period)s
    RETURNING 1
)
UPDATE transaction_meters SET used = greatest(used - (SELECT count(*) FROM gone), 0)
WHERE vendor_id = %(vendor_id)s AND period = %(period)s AND EXISTS (SELECT 1 FROM gone);

-- name: renew
-- params: Renew
UPDATE meter_leases SET expires_at = now() + %(lease)s
WHERE (vendor_id, id) IN (
    SELECT vendor_id, id FROM meter_leases
    WHERE (vendor_id, id) IN (SELECT * FROM unnest(%(vendor_ids)s::bigint[], %(lease_ids)s::bigint[]))
    FOR UPDATE SKIP LOCKED
);
