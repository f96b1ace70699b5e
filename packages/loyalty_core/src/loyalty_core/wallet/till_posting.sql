-- name: post
-- params: PostingParams
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
)
SELECT id, wallet_id, type, amount, running_balance, reason, causer_type, causer_id, created_at, (SELECT count(*) FROM ledger_expired_event_deliveries) + (SELECT count(*) FROM ledger_entry_event_deliveries) AS deliveries FROM ledger_entry;

-- name: expire_batch
-- params: ExpiryBatchParams
WITH batch_groups AS (
    SELECT * FROM unnest(
        %(vendor_ids)s::bigint[], %(wallet_ids)s::bigint[], %(customer_ids)s::bigint[], %(points)s::bigint[],
        %(ended)s::timestamptz[], %(running_balances)s::bigint[], %(event_ids)s::text[], %(event_datas)s::text[]
    ) WITH ORDINALITY AS g(vendor_id, wallet_id, customer_id, points, ended, running_balance, event_id, event_data, n)
), batch_balances AS (
    UPDATE wallets w SET balance = w.balance - t.points, updated_at = %(now)s
    FROM (SELECT vendor_id, wallet_id, sum(points) AS points FROM batch_groups GROUP BY vendor_id, wallet_id) t
    WHERE w.vendor_id = t.vendor_id AND w.id = t.wallet_id
), batch_entries AS (
    INSERT INTO ledger_entries
        (id, vendor_id, wallet_id, type, amount, running_balance, reason, causer_type, causer_id,
         idempotency_key, created_at, updated_at)
    SELECT nextval('ledger_entries_id_seq'), g.vendor_id, g.wallet_id, 'expire', -g.points,
           g.running_balance, 'expired', 'system', NULL, NULL, g.ended, %(now)s
    FROM batch_groups g
    ORDER BY g.n
    RETURNING id, vendor_id, wallet_id, running_balance, created_at
), batch_lots AS (
    UPDATE point_lots p SET remaining = 0, updated_at = %(now)s
    FROM batch_groups g
    WHERE p.vendor_id = g.vendor_id AND p.wallet_id = g.wallet_id AND p.expires_at = g.ended AND p.remaining > 0
), batch_expired_event_recorded AS (
    INSERT INTO events (vendor_id, id, type, payload_version, created_at, customer_id, data)
    SELECT x.vendor_id, g.event_id, 'points.expired', 1,
           %(now)s, g.customer_id,
           CAST(g.event_data AS jsonb) || jsonb_build_object('id', x.id, 'running_balance', x.running_balance)
    FROM batch_entries x JOIN batch_groups g ON g.vendor_id = x.vendor_id AND g.wallet_id = x.wallet_id AND g.ended = x.created_at
    RETURNING vendor_id, id, type, created_at
), batch_expired_event_deliveries AS (
    INSERT INTO webhook_deliveries
        (id, vendor_id, endpoint_id, event_id, attempt, status, next_attempt_at, created_at, updated_at)
    SELECT nextval('webhook_deliveries_id_seq'), w.vendor_id, w.id, e.id, 1, 'pending',
           e.created_at, e.created_at, e.created_at
    FROM batch_expired_event_recorded e
    JOIN webhook_endpoints w ON w.vendor_id = e.vendor_id
    WHERE w.enabled AND (e.type = ANY (w.events) OR '*' = ANY (w.events))
    RETURNING 1
)
SELECT (SELECT count(*) FROM batch_entries) AS entries, (SELECT count(*) FROM batch_expired_event_deliveries) AS deliveries;
