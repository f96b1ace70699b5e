-- name: write
-- params: PurchaseWrite
WITH spent AS (
    DELETE FROM meter_leases WHERE vendor_id = %(vendor_id)s AND id = %(lease_id)s
    RETURNING 1
), meter AS (
    INSERT INTO transaction_meters AS tm (vendor_id, period, used)
    SELECT %(vendor_id)s, %(period)s, 1 WHERE %(metered)s AND NOT EXISTS (SELECT 1 FROM spent)
    ON CONFLICT (vendor_id, period) DO UPDATE SET used = tm.used + 1 WHERE tm.used < %(hard_limit)s
    RETURNING 1
), ok AS (
    SELECT 1 AS go WHERE NOT %(metered)s OR EXISTS (SELECT 1 FROM spent) OR EXISTS (SELECT 1 FROM meter)
), ledger_balance AS (
    UPDATE wallets SET balance = balance - %(expired_points)s + %(amount)s, updated_at = %(now)s
    WHERE vendor_id = %(vendor_id)s AND id = %(wallet_id)s AND %(amount)s <> 0 AND (EXISTS (SELECT 1 FROM ok))
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
), t AS (
    INSERT INTO transactions
        (id, vendor_id, customer_id, idempotency_key, total_amount, description, external_reference, branch_id,
         points_earned, rules_applied, ledger_entry_id, points_available_at, created_at, updated_at)
    SELECT nextval('transactions_id_seq'), %(vendor_id)s, %(customer_id)s, %(idempotency_key)s, %(total_amount)s,
           %(description)s, %(external_reference)s, %(branch_id)s, %(points_earned)s, %(rules_applied)s,
           (SELECT id FROM ledger_entry), %(points_available_at)s, %(now)s, %(now)s
    FROM ok
    RETURNING id
), lines AS (
    INSERT INTO transaction_items
        (id, vendor_id, transaction_id, position, name, sku, quantity, unit_price, line_total, category,
         created_at, updated_at)
    SELECT nextval('transaction_items_id_seq'), %(vendor_id)s, t.id, i.n, i.name, i.sku, i.qty, i.price,
           i.qty::bigint * i.price, i.cat, %(now)s, %(now)s
    FROM t, unnest(%(line_names)s::text[], %(line_skus)s::text[], %(line_quantities)s::int[],
                   %(line_unit_prices)s::int[], %(line_categories)s::text[])
         WITH ORDINALITY AS i(name, sku, qty, price, cat, n)
    RETURNING id, position
), moments AS (
    INSERT INTO customer_moments AS cm
        (id, vendor_id, customer_id, moment, since, state, transaction_id, created_at, updated_at)
    SELECT nextval('customer_moments_id_seq'), %(vendor_id)s, %(customer_id)s, m.moment, m.since,
           'paid', t.id, %(now)s, %(now)s
    FROM t, unnest(%(moments)s::text[], %(moment_since)s::date[]) AS m(moment, since)
    ON CONFLICT (vendor_id, customer_id, moment, since) DO UPDATE
    SET state = 'paid', transaction_id = excluded.transaction_id, updated_at = excluded.updated_at
    WHERE cm.state = 'due'
), tier_month AS (
    INSERT INTO tier_months AS tmo (vendor_id, customer_id, month, spend, points)
    SELECT %(vendor_id)s, %(customer_id)s, %(period)s, %(total_amount)s, %(points_earned)s
    FROM t
    ON CONFLICT (vendor_id, customer_id, month)
    DO UPDATE SET spend = tmo.spend + excluded.spend, points = tmo.points + excluded.points
), purchase_event_recorded AS (
    INSERT INTO events (vendor_id, id, type, payload_version, created_at, customer_id, data)
    SELECT %(vendor_id)s, CAST(%(purchase_event_id)s AS text), 'transaction.created', 2,
           %(now)s, CAST(%(customer_id)s AS bigint),
           jsonb_build_array(t.id, (SELECT array_agg(id ORDER BY position) FROM lines), CAST(%(purchase_event_data)s AS text))
    FROM t
    RETURNING vendor_id, id, type, created_at
), purchase_event_deliveries AS (
    INSERT INTO webhook_deliveries
        (id, vendor_id, endpoint_id, event_id, attempt, status, next_attempt_at, created_at, updated_at)
    SELECT nextval('webhook_deliveries_id_seq'), w.vendor_id, w.id, e.id, 1, 'pending',
           e.created_at, e.created_at, e.created_at
    FROM purchase_event_recorded e
    JOIN webhook_endpoints w ON w.vendor_id = e.vendor_id
    WHERE w.enabled AND (e.type = ANY (w.events) OR '*' = ANY (w.events))
    RETURNING 1
)
SELECT t.id AS transaction_id, (SELECT array_agg(id ORDER BY position) FROM lines) AS item_ids,
       (SELECT count(*) FROM purchase_event_deliveries) AS deliveries
FROM t;

-- name: write_pending
-- params: PendingPurchaseWrite
WITH spent AS (
    DELETE FROM meter_leases WHERE vendor_id = %(vendor_id)s AND id = %(lease_id)s
    RETURNING 1
), meter AS (
    INSERT INTO transaction_meters AS tm (vendor_id, period, used)
    SELECT %(vendor_id)s, %(period)s, 1 WHERE %(metered)s AND NOT EXISTS (SELECT 1 FROM spent)
    ON CONFLICT (vendor_id, period) DO UPDATE SET used = tm.used + 1 WHERE tm.used < %(hard_limit)s
    RETURNING 1
), ok AS (
    SELECT 1 AS go WHERE NOT %(metered)s OR EXISTS (SELECT 1 FROM spent) OR EXISTS (SELECT 1 FROM meter)
), ledger_balance AS (
    UPDATE wallets SET balance = balance - %(expired_points)s + %(amount)s, updated_at = %(now)s
    WHERE vendor_id = %(vendor_id)s AND id = %(wallet_id)s AND %(amount)s <> 0 AND (EXISTS (SELECT 1 FROM ok))
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
), t AS (
    INSERT INTO transactions
        (id, vendor_id, customer_id, idempotency_key, total_amount, description, external_reference, branch_id,
         points_earned, rules_applied, ledger_entry_id, points_available_at, created_at, updated_at)
    SELECT nextval('transactions_id_seq'), %(vendor_id)s, %(customer_id)s, %(idempotency_key)s, %(total_amount)s,
           %(description)s, %(external_reference)s, %(branch_id)s, %(points_earned)s, %(rules_applied)s,
           (SELECT id FROM ledger_entry), %(points_available_at)s, %(now)s, %(now)s
    FROM ok
    RETURNING id
), pending AS (
    INSERT INTO pending_points
        (id, vendor_id, wallet_id, transaction_id, entry_type, points, available_at, lot_expires_at, causer_type,
         causer_id, created_at, updated_at)
    SELECT nextval('pending_points_id_seq'), %(vendor_id)s, %(wallet_id)s, t.id, 'earn', %(pending_points)s,
           %(available_at)s, %(pending_lot_ends)s, %(causer_type)s, %(causer_id)s, %(now)s, %(now)s
    FROM t WHERE %(pending_points)s > 0
    RETURNING 1
), pending_next AS (
    UPDATE wallets SET pending_next_at = least(pending_next_at, %(available_at)s)
    WHERE vendor_id = %(vendor_id)s AND id = %(wallet_id)s AND EXISTS (SELECT 1 FROM pending)
), lines AS (
    INSERT INTO transaction_items
        (id, vendor_id, transaction_id, position, name, sku, quantity, unit_price, line_total, category,
         created_at, updated_at)
    SELECT nextval('transaction_items_id_seq'), %(vendor_id)s, t.id, i.n, i.name, i.sku, i.qty, i.price,
           i.qty::bigint * i.price, i.cat, %(now)s, %(now)s
    FROM t, unnest(%(line_names)s::text[], %(line_skus)s::text[], %(line_quantities)s::int[],
                   %(line_unit_prices)s::int[], %(line_categories)s::text[])
         WITH ORDINALITY AS i(name, sku, qty, price, cat, n)
    RETURNING id, position
), moments AS (
    INSERT INTO customer_moments AS cm
        (id, vendor_id, customer_id, moment, since, state, transaction_id, created_at, updated_at)
    SELECT nextval('customer_moments_id_seq'), %(vendor_id)s, %(customer_id)s, m.moment, m.since,
           'paid', t.id, %(now)s, %(now)s
    FROM t, unnest(%(moments)s::text[], %(moment_since)s::date[]) AS m(moment, since)
    ON CONFLICT (vendor_id, customer_id, moment, since) DO UPDATE
    SET state = 'paid', transaction_id = excluded.transaction_id, updated_at = excluded.updated_at
    WHERE cm.state = 'due'
), tier_month AS (
    INSERT INTO tier_months AS tmo (vendor_id, customer_id, month, spend, points)
    SELECT %(vendor_id)s, %(customer_id)s, %(period)s, %(total_amount)s, %(points_earned)s
    FROM t
    ON CONFLICT (vendor_id, customer_id, month)
    DO UPDATE SET spend = tmo.spend + excluded.spend, points = tmo.points + excluded.points
), purchase_event_recorded AS (
    INSERT INTO events (vendor_id, id, type, payload_version, created_at, customer_id, data)
    SELECT %(vendor_id)s, CAST(%(purchase_event_id)s AS text), 'transaction.created', 2,
           %(now)s, CAST(%(customer_id)s AS bigint),
           jsonb_build_array(t.id, (SELECT array_agg(id ORDER BY position) FROM lines), CAST(%(purchase_event_data)s AS text))
    FROM t
    RETURNING vendor_id, id, type, created_at
), purchase_event_deliveries AS (
    INSERT INTO webhook_deliveries
        (id, vendor_id, endpoint_id, event_id, attempt, status, next_attempt_at, created_at, updated_at)
    SELECT nextval('webhook_deliveries_id_seq'), w.vendor_id, w.id, e.id, 1, 'pending',
           e.created_at, e.created_at, e.created_at
    FROM purchase_event_recorded e
    JOIN webhook_endpoints w ON w.vendor_id = e.vendor_id
    WHERE w.enabled AND (e.type = ANY (w.events) OR '*' = ANY (w.events))
    RETURNING 1
)
SELECT t.id AS transaction_id, (SELECT array_agg(id ORDER BY position) FROM lines) AS item_ids,
       (SELECT count(*) FROM purchase_event_deliveries) AS deliveries
FROM t;
