"""The scale deployment's rows, written by PostgreSQL itself: ``INSERT ... SELECT`` over
``generate_series``, into tables whose secondary indexes and foreign keys are rebuilt afterwards.

Each customer's ledger is planned first, in an unlogged table (one row per entry: its kind, amount,
running balance and instant), customer by customer, so every running balance and every lot's
remainder is a window over one customer's few rows, never a sort of the whole ledger. Then the
entries get ids in the order of their instants (the ledger of a live service, where ids follow
time and one customer's entries are scattered over the table), and every table is written from
that plan:

- an entry of a purchase (``earn``) has its transaction (``ledger_entry_id``, ``points_earned`` = its
  amount by the vendor's one earn rule, 1 point per 100 cents) with its items; a ``redeem`` entry its
  redemption (``used``, the lots it took in ``taken_lots``); the rest are ``adjust`` entries;
- every positive entry opens a lot ending ``expiry_days`` after it (LEDGER-2); each deduction takes
  the soonest-ending lots first, so with one expiry period a lot's remainder is what the customer's
  deductions left of the points credited up to it (first in, first out);
- no deduction falls within a day of the first lot's end, so none spends points past their end
  (LEDGER-9); the lots that ended since (the last ``months - 12`` months' worth) are still open: the
  deployment is the day the ``expire-points`` job meets them all at once;
- the ledger's totals, each customer's latest purchase and the watermark are folded up to the
  newest entry, as the ``ledger-totals`` job leaves them (TOTALS-2);
- the newest ``adjust`` entries have their ``points.adjusted`` events, as the till writes them.

Ids of lots, transactions and redemptions are their entry's id (one sequence per table still hands
out the next ones above them); items are numbered per transaction.
"""

from __future__ import annotations

COST = 100
"""The one reward's point cost: a redemption's deduction."""
MIN_CREDIT = 35
"""The least an entry credits; with the k-th deduction no sooner than the 4k-th entry, three credits
(105) always cover each deduction, so no running balance goes below 0."""

FIRST_NAMES = [
    "Anna", "José", "Zoë", "Renée", "Chloé", "Björn", "Sven", "Noah", "Émile", "Lucía", "Daan", "Sem",
    "Julia", "Mila", "Tess", "Finn", "Lars", "Ångström", "Inès", "Jürgen", "Søren", "Maëlle", "Luuk", "Fenna",
]  # fmt: skip
SYLLABLES = [
    "van", "der", "berg", "jan", "sen", "dijk", "hof", "man", "kor", "ten", "bos", "mul", "ler", "ver",
    "meer", "zand", "vlie", "gen", "brö", "cke", "lé", "ger", "stra", "huis", "wijk", "laan", "kamp",
    "molen", "veld", "broek", "horst", "beek",
]  # fmt: skip
"""Last names are three syllables: 32,768 names, so a full last name matches about 30 of a million
customers and a syllable (a part of a name) tens of thousands."""

FUNCTIONS = """
CREATE FUNCTION pg_temp.code31(n bigint, places int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg(substr('ABCDEFGHJKMNPQRSTUVWXYZ23456789', ((n / (31::bigint ^ p)::bigint) %% 31)::int + 1, 1),
                      '' ORDER BY p DESC)
    FROM generate_series(0, places - 1) p
$$;
CREATE FUNCTION pg_temp.base62(n bigint, places int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg(substr('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
                             ((n / (62::bigint ^ p)::bigint) %% 62)::int + 1, 1), '' ORDER BY p DESC)
    FROM generate_series(0, places - 1) p
$$;
"""

# 31^8 codes; a multiplier prime to 31 makes customer number -> code a one-to-one map per vendor
_CODES = 31**8
_SPREAD = 1_000_003


def steps() -> list[tuple[str, str]]:
    """(what, SQL) in the order they run; the SQL reads ``scale_vendors`` and the parameters
    ``start``, ``span_days``, ``expiry_days``, ``events``, ``items``, ``cost``."""
    first = ", ".join(f"'{n}'" for n in FIRST_NAMES)
    syllables = ", ".join(f"'{s}'" for s in SYLLABLES)
    return [
        ("plans, vendors, rules, rewards", _TENANCY),
        (
            "customers",
            _CUSTOMERS.format(first=first, nfirst=len(FIRST_NAMES), syllables=syllables, codes=_CODES, spread=_SPREAD),
        ),
        ("customer_identifiers", _CARDS.format(codes=_CODES, spread=_SPREAD)),
        ("plan of each customer's ledger", _PEOPLE),
        ("plan of each entry", _PLAN),
        ("entry ids in time order", _IDS),
        ("ledger_entries", _ENTRIES),
        ("wallets", _WALLETS),
        ("point_lots", _LOTS),
        ("transactions", _TRANSACTIONS),
        ("transaction_items", _ITEMS),
        ("tier_months", _TIER_MONTHS),
        ("redemptions", _REDEMPTIONS.format(codes=_CODES, spread=_SPREAD)),
        ("events", _EVENTS),
        ("ledger_totals (daily, monthly), customer_activity, activity_days, branch_totals, watermark", _FOLDED),
        ("drop the plan", "DROP TABLE scale_people, scale_plan, scale_ids"),
    ]


_TENANCY = """
INSERT INTO plans (id, name, max_transactions, max_customers, max_rewards, max_campaigns, max_locations,
                   rate_limit_per_minute, overage_percent, feature_campaigns, feature_customer_moments,
                   feature_point_expiry, selectable, created_at, updated_at)
VALUES (1, 'scale', 0, 0, 0, 0, 0, 0, 0, true, true, true, false, %(start)s, %(start)s);
INSERT INTO vendors (id, name, plan_id, status, points_expire_after_days, code_prefix, earning_version,
                     created_at, updated_at)
SELECT vendor_id, CASE WHEN vendor_id = 1 THEN 'Scale large' ELSE 'Scale small ' || vendor_id END, 1, 'active',
       %(expiry_days)s, translate(pg_temp.code31(vendor_id * 7919 %% 279841, 4), '23456789', 'BCDEFGHJ'), 1,
       %(start)s, %(start)s
FROM scale_vendors;
INSERT INTO earn_rules (id, vendor_id, name, points_per_unit, unit_amount, min_transaction_amount, active, version,
                        created_at, updated_at)
SELECT vendor_id, vendor_id, 'Base', 1, 100, 0, true, 1, %(start)s, %(start)s FROM scale_vendors;
INSERT INTO rewards (id, vendor_id, type, name, point_cost, payment_amount, status, created_at, updated_at)
SELECT vendor_id, vendor_id, 'free_product', 'Coffee', %(cost)s, 0, 'active', %(start)s, %(start)s FROM scale_vendors;
"""

# customer k of a vendor joins within the first tenth of the span, in the order of k
_CUSTOMERS = """
INSERT INTO customers (id, vendor_id, first_name, last_name, email, external_id, locale, status,
                       marketing_consent, customer_since, created_at, updated_at)
SELECT v.first_customer + k - 1, v.vendor_id,
       (ARRAY[{first}])[1 + k %% {nfirst}],
       initcap(s[1 + k %% 32] || s[1 + (k / 32) %% 32] || s[1 + (k / 1024) %% 32]),
       'customer.' || k || '@v' || v.vendor_id || '.example', 'ext-' || k,
       CASE WHEN k %% 3 = 0 THEN 'en' ELSE 'nl' END, 'active', false, j::date, j, j
FROM scale_vendors v, generate_series(1, v.customers) k,
     LATERAL (SELECT ARRAY[{syllables}] AS s,
                     %(start)s + make_interval(days => %(span_days)s) * 0.1 * (k - 1) / v.customers AS j) x
"""

_CARDS = """
INSERT INTO customer_identifiers (id, vendor_id, customer_id, type, value, active, assigned_at, created_at,
                                  updated_at)
SELECT c.id, c.vendor_id, c.id, 'loyalty_card',
       pg_temp.code31((c.id - v.first_customer + 1) * {spread} %% {codes}, 8), true,
       c.created_at, c.created_at, c.created_at
FROM customers c JOIN scale_vendors v USING (vendor_id)
"""

# n entries, t purchases, r redemptions per customer; m: how many of its positions fall more than a
# day before its first lot ends (LEDGER-9: a deduction there spends no ended points); a deduction
# needs three credits before it, so a customer has room for m / 4 of them. A vendor's redemptions are
# dealt out over that room, not over its customers, so a thin ledger (4 entries a customer, one in
# ten redeeming) still holds every redemption asked for; u: where in its slot of time each entry
# falls, so customers do not all buy at the same instants
_PEOPLE = """
CREATE UNLOGGED TABLE scale_people AS
SELECT vendor_id, customer_id, n, t, m, off, u,
       CASE WHEN is_heavy THEN least(r, room)
            ELSE least(room, (dealt * wanted) / nullif(vendor_room, 0)
                             - ((dealt - room) * wanted) / nullif(vendor_room, 0)) END AS r
FROM (
    SELECT *, (sum(room) OVER (PARTITION BY vendor_id, is_heavy ORDER BY customer_id ROWS UNBOUNDED PRECEDING))::bigint
               AS dealt,
           (sum(room) OVER (PARTITION BY vendor_id, is_heavy))::bigint AS vendor_room
    FROM (
        SELECT *, m / 4 AS room FROM (
            SELECT *, least(n, floor(n * (%(expiry_days)s - 1.01) / (%(span_days)s * (1 - off)))::int + 1) AS m
            FROM (
                SELECT v.vendor_id, v.first_customer + k - 1 AS customer_id, x.is_heavy, v.redemptions AS wanted,
                       CASE WHEN x.is_heavy THEN v.heavy ELSE (i * v.entries) / o - ((i - 1) * v.entries) / o END AS n,
                       CASE WHEN x.is_heavy THEN v.heavy_transactions
                            ELSE (i * v.transactions) / o - ((i - 1) * v.transactions) / o END AS t,
                       CASE WHEN x.is_heavy THEN v.heavy_redemptions ELSE 0 END AS r,
                       0.1 * (k - 1) / v.customers AS off, k * 0.6180339887498949 - floor(k * 0.6180339887498949) AS u
                FROM scale_vendors v, generate_series(1, v.customers) k,
                     LATERAL (SELECT v.heavy > 0 AND k = 1 AS is_heavy, (k - (v.heavy > 0)::int)::bigint AS i,
                                     greatest(1, v.customers - (v.heavy > 0)::int)::bigint AS o) x
            ) d
        ) e
    ) f
) g
WHERE n > 0
"""

# one window (the running balance); a customer's r deductions stand among its first m positions at
# the positions the integer steps pick (the k-th at ceil(k * m / r), at least 4k: three credits of
# 35 or more before each), its t purchases among the other positions alike, so no purchase gives way
# to a deduction; what it spent up to an entry (done) is counted, not summed
_PLAN = """
CREATE UNLOGGED TABLE scale_plan AS
SELECT vendor_id, customer_id, j, kind, amount, at, running, running + spent AS credited, spent, spent_total
FROM (
    SELECT q.*, sum(amount) OVER (PARTITION BY customer_id ORDER BY j) AS running
    FROM (
        SELECT p.vendor_id, p.customer_id, j, z.kind,
               CASE z.kind WHEN 'redeem' THEN -%(cost)s
                           WHEN 'earn' THEN 35 + (p.customer_id * 7 + j * 13) %% 60
                           ELSE 35 + (p.customer_id * 11 + j * 3) %% 40 END AS amount,
               %(start)s + make_interval(days => %(span_days)s) * (p.off + (1 - p.off) * (j - 1 + p.u) / p.n) AS at,
               %(cost)s * y.done AS spent,
               %(cost)s * p.r AS spent_total
        FROM scale_people p, generate_series(1, p.n) j, LATERAL (
            SELECT coalesce((least(j, p.m) * p.r) / nullif(p.m, 0), 0) AS done,
                   coalesce((least(j - 1, p.m) * p.r) / nullif(p.m, 0), 0) AS before
        ) y, LATERAL (
            SELECT CASE WHEN y.done > y.before THEN 'redeem'
                        WHEN ((j - y.done) * p.t) / (p.n - p.r) > ((j - 1 - y.before) * p.t) / (p.n - p.r)
                        THEN 'earn'
                        ELSE 'adjust' END AS kind
        ) z
    ) q
) w
"""

_IDS = """
CREATE UNLOGGED TABLE scale_ids AS
SELECT row_number() OVER (ORDER BY at, customer_id, j) AS id, * FROM scale_plan;
CREATE INDEX ON scale_ids (customer_id, j);
ANALYZE scale_ids
"""

_ENTRIES = """
INSERT INTO ledger_entries (id, vendor_id, wallet_id, type, amount, running_balance, reason, causer_type, causer_id,
                            idempotency_key, created_at, updated_at)
SELECT id, vendor_id, customer_id, kind, amount, running,
       CASE kind WHEN 'redeem' THEN 'redemption' WHEN 'adjust' THEN 'scale' END,
       'api_client', 'cl_scale' || vendor_id,
       CASE kind WHEN 'adjust' THEN 'scale-' || id END, at, at
FROM scale_ids
"""

_WALLETS = """
INSERT INTO wallets (id, vendor_id, customer_id, balance, created_at, updated_at)
SELECT c.id, c.vendor_id, c.id, coalesce(last.running, 0), c.created_at, coalesce(last.at, c.created_at)
FROM customers c LEFT JOIN LATERAL (
    SELECT s.running, s.at FROM scale_ids s WHERE s.customer_id = c.id ORDER BY s.j DESC LIMIT 1
) last ON true
"""

_LOTS = """
INSERT INTO point_lots (id, vendor_id, wallet_id, entry_id, points, remaining, expires_at, created_at, updated_at)
SELECT id, vendor_id, customer_id, id, amount, greatest(0, least(amount, credited - spent_total)),
       at + make_interval(days => %(expiry_days)s), at,
       CASE WHEN credited - amount < spent_total THEN at + interval '1 minute' ELSE at END
FROM scale_ids WHERE amount > 0
"""

_TRANSACTIONS = """
INSERT INTO transactions (id, vendor_id, customer_id, idempotency_key, total_amount, branch_id, points_earned,
                          rules_applied, ledger_entry_id, created_at, updated_at)
SELECT id, vendor_id, customer_id, 'scale-' || id, amount * 100 + (customer_id + j) %% 100, NULL, amount,
       jsonb_build_array(jsonb_build_object(
           'rule_id', vendor_id, 'rule_name', 'Base', 'rule_type', 'base_rate', 'points_earned', amount,
           'family', NULL, 'moment', NULL, 'campaign_version', NULL, 'suppressed_by', NULL, 'reason', NULL,
           'line_breakdown', NULL)),
       id, at, at
FROM scale_ids WHERE kind = 'earn'
"""

# the lines add up to the total: every line but the last costs 100 cents
_ITEMS = """
INSERT INTO transaction_items (id, vendor_id, transaction_id, position, name, sku, quantity, unit_price, line_total,
                               category, created_at, updated_at)
SELECT t.id * %(items)s + n - 1, t.vendor_id, t.id, n,
       (ARRAY['Coffee', 'Bread', 'Milk', 'Cheese'])[1 + (t.id + n) %% 4],
       'SKU-' || (1 + (t.id + n) %% 40), 1, price, price, 'Food', t.created_at, t.created_at
FROM transactions t, generate_series(1, %(items)s) n,
     LATERAL (SELECT CASE WHEN n < %(items)s THEN 100 ELSE t.total_amount - 100 * (%(items)s - 1) END AS price) x
"""

# a redemption takes from the lots whose credited points overlap the points it spent, first in first out
_REDEMPTIONS = """
INSERT INTO redemptions (id, vendor_id, reward_id, customer_id, branch_id, confirmation_code, status, idempotency_key,
                         points_deducted, remaining_balance, ledger_entry_id, taken_lots, reward_name, reward_type,
                         payment_amount, redeemed_at, expires_at, used_at, created_at, updated_at)
SELECT r.id, r.vendor_id, r.vendor_id, r.customer_id, NULL,
       v.code_prefix || '-' || pg_temp.code31(((r.id * {spread}) %% {codes}), 8), 'used', 'scale-' || r.id,
       -r.amount, r.running, r.id, taken.lots, 'Coffee', 'free_product', 0, r.at, NULL,
       r.at + interval '5 minutes', r.at, r.at + interval '5 minutes'
FROM scale_ids r JOIN vendors v ON v.id = r.vendor_id, LATERAL (
    SELECT jsonb_agg(jsonb_build_array(
               least(l.credited, r.spent) - greatest(l.credited - l.amount, r.spent + r.amount),
               to_char((l.at + make_interval(days => %(expiry_days)s)) AT TIME ZONE 'UTC',
                       'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"')) ORDER BY l.j) AS lots
    FROM scale_ids l
    WHERE l.customer_id = r.customer_id AND l.j < r.j AND l.amount > 0
      AND l.credited > r.spent + r.amount AND l.credited - l.amount < r.spent
) taken
WHERE r.kind = 'redeem'
"""

# the newest adjustments' events, as the till records them (EVENT-3's points.adjusted)
_EVENTS = """
INSERT INTO events (vendor_id, id, type, payload_version, created_at, customer_id, data)
SELECT e.vendor_id,
       'evt_' || pg_temp.base62((extract(epoch FROM e.created_at) * 1000000)::bigint, 9)
             || substr(md5(e.id::text), 1, 15),
       'points.adjusted', 1, e.created_at, e.wallet_id,
       jsonb_build_object('id', e.id, 'type', 'adjust', 'amount', e.amount, 'reason', e.reason,
                          'causer_id', e.causer_id, 'wallet_id', e.wallet_id,
                          'created_at', to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                          'causer_type', e.causer_type, 'running_balance', e.running_balance)
FROM ledger_entries e
WHERE e.type = 'adjust' AND e.id >= (
    SELECT coalesce(min(id), 0) FROM (
        SELECT id FROM ledger_entries WHERE vendor_id = 1 AND type = 'adjust' ORDER BY id DESC LIMIT %(events)s
    ) newest
)
"""

# TIER-2: each customer's qualifying months, as the purchases' statements keep them (no returns here)
_TIER_MONTHS = """
INSERT INTO tier_months (vendor_id, customer_id, month, spend, points)
SELECT vendor_id, customer_id, date_trunc('month', created_at AT TIME ZONE 'UTC')::date,
       sum(total_amount - returned_amount), sum(points_earned - points_reversed)
FROM transactions GROUP BY 1, 2, 3
"""

_FOLDED = """
INSERT INTO ledger_totals (vendor_id, day, type, points, points_in, points_out, entries)
SELECT vendor_id, (created_at AT TIME ZONE 'UTC')::date, type, sum(amount), sum(greatest(amount, 0)),
       sum(greatest(-amount, 0)), count(*)
FROM ledger_entries GROUP BY 1, 2, 3;
INSERT INTO ledger_totals_overall (type, points, points_in, points_out, entries)
SELECT type, sum(points), sum(points_in), sum(points_out), sum(entries) FROM ledger_totals GROUP BY type;
INSERT INTO ledger_totals_monthly (vendor_id, month, type, points, points_in, points_out, entries)
SELECT vendor_id, date_trunc('month', day)::date, type, sum(points), sum(points_in), sum(points_out), sum(entries)
FROM ledger_totals GROUP BY 1, 2, 3;
INSERT INTO customer_activity (vendor_id, customer_id, last_purchase_at)
SELECT vendor_id, customer_id, max(created_at) FROM transactions GROUP BY vendor_id, customer_id;
INSERT INTO activity_days (vendor_id, day, customers)
SELECT vendor_id, (last_purchase_at AT TIME ZONE 'UTC')::date, count(*) FROM customer_activity GROUP BY 1, 2;
INSERT INTO branch_totals (vendor_id, day, branch_id, purchases, amount, points_earned, redemptions, points_redeemed)
SELECT vendor_id, day, branch_id, sum(purchases), sum(amount), sum(points_earned), sum(redemptions),
       sum(points_redeemed)
FROM (
    SELECT vendor_id, (created_at AT TIME ZONE 'UTC')::date AS day, coalesce(branch_id, 0) AS branch_id,
           1 AS purchases, total_amount AS amount, points_earned, 0 AS redemptions, 0 AS points_redeemed
    FROM transactions
    UNION ALL
    SELECT vendor_id, (redeemed_at AT TIME ZONE 'UTC')::date, coalesce(branch_id, 0), 0, 0, 0, 1, points_deducted
    FROM redemptions
) moved GROUP BY 1, 2, 3;
INSERT INTO ledger_totals_watermark
    (id, folded_through, purchases_folded_through, branch_purchases_through, branch_entries_through)
VALUES (1, (SELECT coalesce(max(id), 0) FROM ledger_entries), (SELECT coalesce(max(id), 0) FROM transactions),
        (SELECT coalesce(max(id), 0) FROM transactions), (SELECT coalesce(max(id), 0) FROM ledger_entries))
ON CONFLICT (id) DO UPDATE SET folded_through = excluded.folded_through,
    purchases_folded_through = excluded.purchases_folded_through,
    branch_purchases_through = excluded.branch_purchases_through,
    branch_entries_through = excluded.branch_entries_through, pending_through = NULL,
    purchases_pending_through = NULL, pending_transactions = '{}'
"""
