-- name: write
-- params: RedeemWrite
WITH stock AS (
    UPDATE rewards SET remaining_stock = remaining_stock - 1, updated_at = %(now)s
    WHERE vendor_id = %(vendor_id)s AND id = %(reward_id)s AND remaining_stock > 0 AND %(stock_limited)s
    RETURNING id
), go AS (
    SELECT 1 AS ok WHERE NOT %(stock_limited)s OR EXISTS (SELECT 1 FROM stock)
), ledger_balance AS (
    UPDATE wallets SET balance = balance - %(expired_points)s + %(amount)s, updated_at = %(now)s
    WHERE vendor_id = %(vendor_id)s AND id = %(wallet_id)s AND %(amount)s <> 0 AND (EXISTS (SELECT 1 FROM go))
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
), made AS (
    INSERT INTO redemptions
        (id, vendor_id, reward_id, customer_id, branch_id, confirmation_code, status, idempotency_key,
         points_deducted, remaining_balance, ledger_entry_id, taken_lots, reward_name, reward_type,
         discount_type, discount_value, product_reference, payment_amount, redeemed_at, expires_at,
         created_at, updated_at)
    SELECT nextval('redemptions_id_seq'), %(vendor_id)s, %(reward_id)s, %(customer_id)s, %(branch_id)s, %(code)s,
           'valid', %(idempotency_key)s, %(point_cost)s, e.running_balance, e.id, %(taken_lots)s,
           %(reward_name)s, %(reward_type)s, %(discount_type)s, %(discount_value)s, %(product_reference)s,
           %(payment_amount)s, %(now)s, %(expires_at)s, %(now)s, %(now)s
    FROM ledger_entry e
    ON CONFLICT (vendor_id, confirmation_code) DO NOTHING
    RETURNING id
), redeem_event_recorded AS (
    INSERT INTO events (vendor_id, id, type, payload_version, created_at, customer_id, data)
    SELECT %(vendor_id)s, CAST(%(redeem_event_id)s AS text), 'redemption.created', 1,
           %(now)s, CAST(%(customer_id)s AS bigint),
           jsonb_set(CAST(%(redeem_event_data)s AS jsonb), '{redemption_id}', to_jsonb(made.id))
    FROM made
    RETURNING vendor_id, id, type, created_at
), redeem_event_deliveries AS (
    INSERT INTO webhook_deliveries
        (id, vendor_id, endpoint_id, event_id, attempt, status, next_attempt_at, created_at, updated_at)
    SELECT nextval('webhook_deliveries_id_seq'), w.vendor_id, w.id, e.id, 1, 'pending',
           e.created_at, e.created_at, e.created_at
    FROM redeem_event_recorded e
    JOIN webhook_endpoints w ON w.vendor_id = e.vendor_id
    WHERE w.enabled AND (e.type = ANY (w.events) OR '*' = ANY (w.events))
    RETURNING 1
)
SELECT (SELECT ok FROM go), (SELECT id FROM made), (SELECT count(*) FROM redeem_event_deliveries) + (SELECT count(*) FROM ledger_expired_event_deliveries) + (SELECT count(*) FROM ledger_entry_event_deliveries);
