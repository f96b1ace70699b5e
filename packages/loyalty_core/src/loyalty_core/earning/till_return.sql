-- name: key_lock
-- params: ReturnRead
SELECT pg_advisory_xact_lock(%(vendor_id)s::int, hashtext('return:' || %(idempotency_key)s));

-- name: purchase_lock
-- params: ReturnRead
SELECT t.total_amount, t.points_earned, t.returned_amount
FROM transactions t
JOIN customers c ON c.vendor_id = t.vendor_id AND c.id = t.customer_id AND c.status <> 'anonymized'
WHERE t.vendor_id = %(vendor_id)s AND t.id = %(transaction_id)s
FOR UPDATE OF t;

-- name: wallet_lock
-- params: ReturnRead
SELECT w.id AS wallet_id, w.customer_id AS holder_id
FROM wallets w
WHERE w.vendor_id = %(vendor_id)s AND w.customer_id = (
SELECT coalesce(c.merged_into_id, c.id) FROM transactions t
JOIN customers c ON c.vendor_id = t.vendor_id AND c.id = t.customer_id
WHERE t.vendor_id = %(vendor_id)s AND t.id = %(transaction_id)s
)
FOR UPDATE OF w;

-- name: read
-- params: ReturnRead
SELECT h.id AS holder_id, h.status AS holder_status, w.id AS wallet_id,
       lots.ids AS lot_ids, lots.ends AS lot_ends, lots.left AS lot_left,
       r.id AS earlier_id, r.transaction_id AS earlier_transaction_id, r.amount AS earlier_amount,
       b.id AS branch_id, b.external_id AS branch_key, b.name AS branch_name, b.type AS branch_type,
       b.active AS branch_active, w.pending_next_at,
       (SELECT json_agg(json_build_array(p.id, p.points, p.available_at)) FROM pending_points p
        WHERE p.vendor_id = %(vendor_id)s AND p.transaction_id = %(transaction_id)s
          AND p.entry_type = 'earn') AS own_pending,
       (SELECT json_build_array(
        (extract(year FROM date_trunc('month', (%(now)s)::timestamptz AT TIME ZONE 'UTC')) * 12 + extract(month FROM date_trunc('month', (%(now)s)::timestamptz AT TIME ZONE 'UTC')) - 1)::int,
        l.basis, l.period_months, l.grace_months, (SELECT json_agg(json_build_array(r.id, r.key, r.name, r.threshold, r.multiplier_percent)
                  ORDER BY r.position)
             FROM tiers r WHERE r.vendor_id = l.vendor_id AND r.ladder_id = l.id),
        (SELECT json_agg(json_build_array(
                    (extract(year FROM m.month) * 12 + extract(month FROM m.month) - 1)::int, m.spend, m.points))
           FROM (SELECT h.id AS id UNION ALL
                 SELECT f.id FROM customers f WHERE f.vendor_id = l.vendor_id AND f.merged_into_id = h.id) fam
           CROSS JOIN LATERAL (
                SELECT t.month, t.spend, t.points FROM tier_months t
                 WHERE t.vendor_id = l.vendor_id AND t.customer_id = fam.id
                   AND t.month >= (date_trunc('month', (%(now)s)::timestamptz AT TIME ZONE 'UTC') - make_interval(months => l.period_months + l.grace_months))::date
                   AND t.month <= date_trunc('month', (%(now)s)::timestamptz AT TIME ZONE 'UTC')::date
                OFFSET 0) m))
      FROM tier_ladders l
      JOIN vendors v ON v.id = l.vendor_id
      JOIN plans p ON p.id = v.plan_id AND p.feature_tiers
     WHERE l.vendor_id = %(vendor_id)s AND h.merged_into_id IS NULL) AS tier
FROM (SELECT 1) one
LEFT JOIN customers h ON h.vendor_id = %(vendor_id)s AND h.id = (
SELECT coalesce(c.merged_into_id, c.id) FROM transactions t
JOIN customers c ON c.vendor_id = t.vendor_id AND c.id = t.customer_id
WHERE t.vendor_id = %(vendor_id)s AND t.id = %(transaction_id)s
)
LEFT JOIN wallets w ON w.vendor_id = %(vendor_id)s AND w.customer_id = h.id
LEFT JOIN LATERAL (
    SELECT array_agg(l.id) AS ids, array_agg(l.expires_at) AS ends, array_agg(l.remaining) AS left
    FROM point_lots l
    WHERE l.vendor_id = %(vendor_id)s AND l.wallet_id = w.id AND l.remaining > 0
) lots ON true
LEFT JOIN transaction_returns r ON r.vendor_id = %(vendor_id)s AND r.idempotency_key = %(idempotency_key)s
LEFT JOIN branches b ON b.vendor_id = %(vendor_id)s AND b.external_id = %(branch_key)s;

-- name: write
-- params: ReturnWrite
WITH ledger_balance AS (
    UPDATE wallets SET balance = balance - %(expired_points)s + %(amount)s, updated_at = %(now)s
    WHERE vendor_id = %(vendor_id)s AND id = %(wallet_id)s AND %(amount)s <> 0 AND (true)
    RETURNING balance, customer_id
), ledger_expired AS (
    INSERT INTO ledger_entries
        (id, vendor_id, wallet_id, type, amount, running_balance, reason, causer_type, causer_id,
         idempotency_key, created_at, updated_at)
    SELECT nextval('ledger_entries_id_seq'), %(vendor_id)s, %(wallet_id)s, 'expire', -g.points,
           b.balance - %(amount)s + %(expired_points)s - g.upto, 'expired', 'system', NULL,
           NULL, g.at, %(now)s
    FROM ledger_balance b CROSS JOIN (
        SELECT points, at, n, sum(points) OVER (ORDER BY n) AS upto
        FROM unnest(%(expired_each)s::bigint[], %(expired_at)s::timestamptz[]) WITH ORDINALITY AS u(points, at, n)
    ) g
    ORDER BY g.n
    RETURNING id, running_balance, created_at
), ledger_entry AS (
    INSERT INTO ledger_entries
        (id, vendor_id, wallet_id, type, amount, running_balance, reason, causer_type, causer_id,
         idempotency_key, created_at, updated_at)
    SELECT nextval('ledger_entries_id_seq'), %(vendor_id)s, %(wallet_id)s, %(entry_type)s, %(amount)s, b.balance,
           %(reason)s, %(causer_type)s, %(causer_id)s, %(entry_key)s, %(entry_at)s, %(now)s
    FROM ledger_balance b CROSS JOIN (SELECT count(*) FROM ledger_expired) x
    RETURNING id, wallet_id, type, amount, running_balance, reason, causer_type, causer_id, created_at
), ledger_lots_opened AS (
    INSERT INTO point_lots
        (id, vendor_id, wallet_id, entry_id, points, remaining, expires_at, created_at, updated_at)
    SELECT nextval('point_lots_id_seq'), %(vendor_id)s, %(wallet_id)s, e.id, l.points, l.points, l.ends, %(now)s,
           %(now)s
    FROM ledger_entry e, unnest(%(lot_points)s::bigint[], %(lot_ends)s::timestamptz[]) AS l(points, ends)
), ledger_lots_taken AS (
    UPDATE point_lots p SET remaining = p.remaining - t.points, updated_at = %(now)s
    FROM ledger_entry e, unnest(%(take_ids)s::bigint[], %(take_points)s::bigint[]) AS t(id, points)
    WHERE p.vendor_id = %(vendor_id)s AND p.id = t.id AND p.wallet_id = %(wallet_id)s
), ledger_expired_event_recorded AS (
    INSERT INTO events (vendor_id, id, type, payload_version, created_at, customer_id, data)
    SELECT %(vendor_id)s, ev.id, 'points.expired', 1,
           %(now)s, b.customer_id,
           CAST(ev.data AS jsonb) || jsonb_build_object('id', x.id, 'running_balance', x.running_balance)
    FROM ledger_expired x CROSS JOIN ledger_balance b JOIN unnest(
            %(ledger_expired_event_ids)s::text[], %(ledger_expired_event_datas)s::text[], %(expired_at)s::timestamptz[]
        ) AS ev(id, data, at) ON ev.at = x.created_at
    RETURNING vendor_id, id, type, created_at
), ledger_expired_event_deliveries AS (
    INSERT INTO webhook_deliveries
        (id, vendor_id, endpoint_id, event_id, attempt, status, next_attempt_at, created_at, updated_at)
    SELECT nextval('webhook_deliveries_id_seq'), w.vendor_id, w.id, e.id, 1, 'pending',
           e.created_at, e.created_at, e.created_at
    FROM ledger_expired_event_recorded e
    JOIN webhook_endpoints w ON w.vendor_id = e.vendor_id
    WHERE w.enabled AND (e.type = ANY (w.events) OR '*' = ANY (w.events))
    RETURNING 1
), ledger_entry_event_recorded AS (
    INSERT INTO events (vendor_id, id, type, payload_version, created_at, customer_id, data)
    SELECT %(vendor_id)s, CAST(%(ledger_entry_event_id)s AS text), CAST(%(ledger_entry_event_type)s AS text), CAST(%(ledger_entry_event_version)s AS smallint),
           %(now)s, b.customer_id,
           CAST(%(ledger_entry_event_data)s AS jsonb) || jsonb_build_object('id', x.id, 'running_balance', x.running_balance)
    FROM ledger_entry x CROSS JOIN ledger_balance b WHERE CAST(%(ledger_entry_event_type)s AS text) IS NOT NULL
    RETURNING vendor_id, id, type, created_at
), ledger_entry_event_deliveries AS (
    INSERT INTO webhook_deliveries
        (id, vendor_id, endpoint_id, event_id, attempt, status, next_attempt_at, created_at, updated_at)
    SELECT nextval('webhook_deliveries_id_seq'), w.vendor_id, w.id, e.id, 1, 'pending',
           e.created_at, e.created_at, e.created_at
    FROM ledger_entry_event_recorded e
    JOIN webhook_endpoints w ON w.vendor_id = e.vendor_id
    WHERE w.enabled AND (e.type = ANY (w.events) OR '*' = ANY (w.events))
    RETURNING 1
), ret AS (
    INSERT INTO transaction_returns
        (id, vendor_id, transaction_id, idempotency_key, amount, items, reason, branch_id, points_reversed,
         points_unrecovered, ledger_entry_id, created_at, updated_at)
    VALUES (nextval('transaction_returns_id_seq'), %(vendor_id)s, %(transaction_id)s, %(idempotency_key)s,
            %(returned_amount)s, %(returned_items)s, %(return_reason)s, %(branch_id)s, %(points_reversed)s,
            %(points_unrecovered)s, (SELECT id FROM ledger_entry), %(now)s, %(now)s)
    RETURNING id
), totals AS (
    UPDATE transactions
    SET returned_amount = returned_amount + %(returned_amount)s,
        points_reversed = points_reversed + %(points_reversed)s, updated_at = %(now)s
    WHERE vendor_id = %(vendor_id)s AND id = %(transaction_id)s
), tier_month AS (
    UPDATE tier_months tmo
    SET spend = tmo.spend - %(returned_amount)s,
        points = tmo.points - (%(points_reversed)s + %(points_unrecovered)s)
    FROM transactions bought
    WHERE bought.vendor_id = %(vendor_id)s AND bought.id = %(transaction_id)s
      AND tmo.vendor_id = bought.vendor_id AND tmo.customer_id = bought.customer_id
      AND tmo.month = date_trunc('month', bought.created_at AT TIME ZONE 'UTC')::date
), return_event_recorded AS (
    INSERT INTO events (vendor_id, id, type, payload_version, created_at, customer_id, data)
    SELECT %(vendor_id)s, CAST(%(return_event_id)s AS text), 'transaction.returned', 1,
           %(now)s, CAST(%(purchase_customer_id)s AS bigint),
           jsonb_set(CAST(%(return_event_data)s AS jsonb), '{return,id}', to_jsonb(ret.id))
    FROM ret
    RETURNING vendor_id, id, type, created_at
), return_event_deliveries AS (
    INSERT INTO webhook_deliveries
        (id, vendor_id, endpoint_id, event_id, attempt, status, next_attempt_at, created_at, updated_at)
    SELECT nextval('webhook_deliveries_id_seq'), w.vendor_id, w.id, e.id, 1, 'pending',
           e.created_at, e.created_at, e.created_at
    FROM return_event_recorded e
    JOIN webhook_endpoints w ON w.vendor_id = e.vendor_id
    WHERE w.enabled AND (e.type = ANY (w.events) OR '*' = ANY (w.events))
    RETURNING 1
)
SELECT id, (SELECT count(*) FROM return_event_deliveries) + (SELECT count(*) FROM ledger_expired_event_deliveries) + (SELECT count(*) FROM ledger_entry_event_deliveries) AS deliveries FROM ret;

-- name: write_pending
-- params: PendingReturnWrite
WITH ledger_balance AS (
    UPDATE wallets SET balance = balance - %(expired_points)s + %(amount)s, updated_at = %(now)s
    WHERE vendor_id = %(vendor_id)s AND id = %(wallet_id)s AND %(amount)s <> 0 AND (true)
    RETURNING balance, customer_id
), ledger_expired AS (
    INSERT INTO ledger_entries
        (id, vendor_id, wallet_id, type, amount, running_balance, reason, causer_type, causer_id,
         idempotency_key, created_at, updated_at)
    SELECT nextval('ledger_entries_id_seq'), %(vendor_id)s, %(wallet_id)s, 'expire', -g.points,
           b.balance - %(amount)s + %(expired_points)s - g.upto, 'expired', 'system', NULL,
           NULL, g.at, %(now)s
    FROM ledger_balance b CROSS JOIN (
        SELECT points, at, n, sum(points) OVER (ORDER BY n) AS upto
        FROM unnest(%(expired_each)s::bigint[], %(expired_at)s::timestamptz[]) WITH ORDINALITY AS u(points, at, n)
    ) g
    ORDER BY g.n
    RETURNING id, running_balance, created_at
), ledger_entry AS (
    INSERT INTO ledger_entries
        (id, vendor_id, wallet_id, type, amount, running_balance, reason, causer_type, causer_id,
         idempotency_key, created_at, updated_at)
    SELECT nextval('ledger_entries_id_seq'), %(vendor_id)s, %(wallet_id)s, %(entry_type)s, %(amount)s, b.balance,
           %(reason)s, %(causer_type)s, %(causer_id)s, %(entry_key)s, %(entry_at)s, %(now)s
    FROM ledger_balance b CROSS JOIN (SELECT count(*) FROM ledger_expired) x
    RETURNING id, wallet_id, type, amount, running_balance, reason, causer_type, causer_id, created_at
), ledger_lots_opened AS (
    INSERT INTO point_lots
        (id, vendor_id, wallet_id, entry_id, points, remaining, expires_at, created_at, updated_at)
    SELECT nextval('point_lots_id_seq'), %(vendor_id)s, %(wallet_id)s, e.id, l.points, l.points, l.ends, %(now)s,
           %(now)s
    FROM ledger_entry e, unnest(%(lot_points)s::bigint[], %(lot_ends)s::timestamptz[]) AS l(points, ends)
), ledger_lots_taken AS (
    UPDATE point_lots p SET remaining = p.remaining - t.points, updated_at = %(now)s
    FROM ledger_entry e, unnest(%(take_ids)s::bigint[], %(take_points)s::bigint[]) AS t(id, points)
    WHERE p.vendor_id = %(vendor_id)s AND p.id = t.id AND p.wallet_id = %(wallet_id)s
), ledger_expired_event_recorded AS (
    INSERT INTO events (vendor_id, id, type, payload_version, created_at, customer_id, data)
    SELECT %(vendor_id)s, ev.id, 'points.expired', 1,
           %(now)s, b.customer_id,
           CAST(ev.data AS jsonb) || jsonb_build_object('id', x.id, 'running_balance', x.running_balance)
    FROM ledger_expired x CROSS JOIN ledger_balance b JOIN unnest(
            %(ledger_expired_event_ids)s::text[], %(ledger_expired_event_datas)s::text[], %(expired_at)s::timestamptz[]
        ) AS ev(id, data, at) ON ev.at = x.created_at
    RETURNING vendor_id, id, type, created_at
), ledger_expired_event_deliveries AS (
    INSERT INTO webhook_deliveries
        (id, vendor_id, endpoint_id, event_id, attempt, status, next_attempt_at, created_at, updated_at)
    SELECT nextval('webhook_deliveries_id_seq'), w.vendor_id, w.id, e.id, 1, 'pending',
           e.created_at, e.created_at, e.created_at
    FROM ledger_expired_event_recorded e
    JOIN webhook_endpoints w ON w.vendor_id = e.vendor_id
    WHERE w.enabled AND (e.type = ANY (w.events) OR '*' = ANY (w.events))
    RETURNING 1
), ledger_entry_event_recorded AS (
    INSERT INTO events (vendor_id, id, type, payload_version, created_at, customer_id, data)
    SELECT %(vendor_id)s, CAST(%(ledger_entry_event_id)s AS text), CAST(%(ledger_entry_event_type)s AS text), CAST(%(ledger_entry_event_version)s AS smallint),
           %(now)s, b.customer_id,
           CAST(%(ledger_entry_event_data)s AS jsonb) || jsonb_build_object('id', x.id, 'running_balance', x.running_balance)
    FROM ledger_entry x CROSS JOIN ledger_balance b WHERE CAST(%(ledger_entry_event_type)s AS text) IS NOT NULL
    RETURNING vendor_id, id, type, created_at
), ledger_entry_event_deliveries AS (
    INSERT INTO webhook_deliveries
        (id, vendor_id, endpoint_id, event_id, attempt, status, next_attempt_at, created_at, updated_at)
    SELECT nextval('webhook_deliveries_id_seq'), w.vendor_id, w.id, e.id, 1, 'pending',
           e.created_at, e.created_at, e.created_at
    FROM ledger_entry_event_recorded e
    JOIN webhook_endpoints w ON w.vendor_id = e.vendor_id
    WHERE w.enabled AND (e.type = ANY (w.events) OR '*' = ANY (w.events))
    RETURNING 1
), pending_gone AS (
    DELETE FROM pending_points
    WHERE vendor_id = %(vendor_id)s AND id = %(pending_id)s AND points = %(pending_cancelled)s
), pending_less AS (
    UPDATE pending_points SET points = points - %(pending_cancelled)s, updated_at = %(now)s
    WHERE vendor_id = %(vendor_id)s AND id = %(pending_id)s AND points > %(pending_cancelled)s
), ret AS (
    INSERT INTO transaction_returns
        (id, vendor_id, transaction_id, idempotency_key, amount, items, reason, branch_id, points_reversed,
         points_unrecovered, ledger_entry_id, created_at, updated_at)
    VALUES (nextval('transaction_returns_id_seq'), %(vendor_id)s, %(transaction_id)s, %(idempotency_key)s,
            %(returned_amount)s, %(returned_items)s, %(return_reason)s, %(branch_id)s, %(points_reversed)s,
            %(points_unrecovered)s, (SELECT id FROM ledger_entry), %(now)s, %(now)s)
    RETURNING id
), totals AS (
    UPDATE transactions
    SET returned_amount = returned_amount + %(returned_amount)s,
        points_reversed = points_reversed + %(points_reversed)s, updated_at = %(now)s
    WHERE vendor_id = %(vendor_id)s AND id = %(transaction_id)s
), tier_month AS (
    UPDATE tier_months tmo
    SET spend = tmo.spend - %(returned_amount)s,
        points = tmo.points - (%(points_reversed)s + %(points_unrecovered)s)
    FROM transactions bought
    WHERE bought.vendor_id = %(vendor_id)s AND bought.id = %(transaction_id)s
      AND tmo.vendor_id = bought.vendor_id AND tmo.customer_id = bought.customer_id
      AND tmo.month = date_trunc('month', bought.created_at AT TIME ZONE 'UTC')::date
), return_event_recorded AS (
    INSERT INTO events (vendor_id, id, type, payload_version, created_at, customer_id, data)
    SELECT %(vendor_id)s, CAST(%(return_event_id)s AS text), 'transaction.returned', 1,
           %(now)s, CAST(%(purchase_customer_id)s AS bigint),
           jsonb_set(CAST(%(return_event_data)s AS jsonb), '{return,id}', to_jsonb(ret.id))
    FROM ret
    RETURNING vendor_id, id, type, created_at
), return_event_deliveries AS (
    INSERT INTO webhook_deliveries
        (id, vendor_id, endpoint_id, event_id, attempt, status, next_attempt_at, created_at, updated_at)
    SELECT nextval('webhook_deliveries_id_seq'), w.vendor_id, w.id, e.id, 1, 'pending',
           e.created_at, e.created_at, e.created_at
    FROM return_event_recorded e
    JOIN webhook_endpoints w ON w.vendor_id = e.vendor_id
    WHERE w.enabled AND (e.type = ANY (w.events) OR '*' = ANY (w.events))
    RETURNING 1
)
SELECT id, (SELECT count(*) FROM return_event_deliveries) + (SELECT count(*) FROM ledger_expired_event_deliveries) + (SELECT count(*) FROM ledger_entry_event_deliveries) AS deliveries FROM ret;
