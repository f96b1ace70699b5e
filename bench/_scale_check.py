"""The scale deployment's proof: every rule its rows must keep, each a query that counts what breaks
it (zero everywhere, or the build fails), and the sizes it reached.

- LEDGER-1: per wallet, the balance is the sum of its entries and the last running balance, each
  running balance is the one before plus its amount, and the open lots hold the balance;
- LEDGER-2: every positive entry opened one lot of its amount, ending ``expiry_days`` after it;
- EARN-1: a purchase earned ``floor(total / 100)``, its entry's amount, and its lines add up to it;
- a redemption's entry took its points, and its ``taken_lots`` add up to them; every ``redeem`` entry
  has its redemption, and LEDGER-9: none took a lot that had ended;
- the large vendor's purchases and redemptions are those asked, within 1%;
- TOTALS-2: the folded totals equal the ledger's sums up to the watermark, and each customer's
  latest purchase is folded;
- TIER-2: each customer's qualifying months are the sums of their purchases of that month;
- the sequences hand out ids above every row's.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import psycopg

from bench._scale_sizes import Sizes

CHECKS: list[tuple[str, str]] = [
    (
        "TIER-2 each customer's months are the sums of their purchases",
        """SELECT count(*) FROM (
               SELECT vendor_id, customer_id, date_trunc('month', created_at AT TIME ZONE 'UTC')::date AS month,
                      sum(total_amount - returned_amount) AS spend, sum(points_earned - points_reversed) AS points
               FROM transactions GROUP BY 1, 2, 3) t
           FULL JOIN tier_months m USING (vendor_id, customer_id, month)
           WHERE m.spend IS DISTINCT FROM t.spend OR m.points IS DISTINCT FROM t.points""",
    ),
    (
        "LEDGER-1 balance = sum of entries = last running balance",
        """SELECT count(*) FROM wallets w LEFT JOIN (
               SELECT DISTINCT ON (wallet_id) wallet_id, running_balance AS last FROM ledger_entries
               ORDER BY wallet_id, id DESC) l ON l.wallet_id = w.id
           LEFT JOIN (SELECT wallet_id, sum(amount) AS total FROM ledger_entries GROUP BY wallet_id) s
               ON s.wallet_id = w.id
           WHERE w.balance <> coalesce(s.total, 0) OR w.balance <> coalesce(l.last, 0)""",
    ),
    (
        "LEDGER-1 each running balance = the previous one + its amount",
        """SELECT count(*) FROM (
               SELECT running_balance - amount
                      - coalesce(lag(running_balance) OVER (PARTITION BY wallet_id ORDER BY created_at, id), 0) AS off
               FROM ledger_entries) d WHERE off <> 0""",
    ),
    (
        "LEDGER-1 the open lots hold the balance",
        """SELECT count(*) FROM wallets w
           LEFT JOIN (SELECT wallet_id, sum(remaining) AS held FROM point_lots GROUP BY wallet_id) p
               ON p.wallet_id = w.id
           WHERE w.balance <> coalesce(p.held, 0)""",
    ),
    (
        "LEDGER-2 one lot of its amount per positive entry, ending after the vendor's days",
        """SELECT count(*) FROM ledger_entries e
           JOIN vendors v ON v.id = e.vendor_id
           LEFT JOIN point_lots p ON p.vendor_id = e.vendor_id AND p.entry_id = e.id
           WHERE e.amount > 0 AND (p.id IS NULL OR p.points <> e.amount
               OR p.expires_at <> e.created_at + make_interval(days => v.points_expire_after_days))""",
    ),
    (
        "EARN-1 a purchase earns floor(total / 100), its entry's amount, its lines add up",
        """SELECT count(*) FROM transactions t
           JOIN ledger_entries e ON e.vendor_id = t.vendor_id AND e.id = t.ledger_entry_id
           LEFT JOIN (SELECT vendor_id, transaction_id, sum(line_total) AS lines FROM transaction_items
                      GROUP BY 1, 2) i ON i.vendor_id = t.vendor_id AND i.transaction_id = t.id
           WHERE t.points_earned <> t.total_amount / 100 OR e.amount <> t.points_earned OR e.type <> 'earn'
              OR e.wallet_id <> t.customer_id OR (i.lines IS NOT NULL AND i.lines <> t.total_amount)""",
    ),
    (
        "a redemption's entry and taken lots hold its points",
        """SELECT count(*) FROM redemptions r
           JOIN ledger_entries e ON e.vendor_id = r.vendor_id AND e.id = r.ledger_entry_id
           WHERE e.amount <> -r.points_deducted OR e.running_balance <> r.remaining_balance
              OR e.type <> 'redeem' OR e.wallet_id <> r.customer_id
              OR (SELECT sum((l ->> 0)::bigint) FROM jsonb_array_elements(r.taken_lots) l) <> r.points_deducted""",
    ),
    (
        "every redeem entry has its redemption",
        """SELECT count(*) FROM ledger_entries e
           LEFT JOIN redemptions r ON r.vendor_id = e.vendor_id AND r.ledger_entry_id = e.id
           WHERE e.type = 'redeem' AND r.id IS NULL""",
    ),
    (
        "LEDGER-9 a redemption took only lots that had not ended at its instant",
        """SELECT count(*) FROM redemptions r, jsonb_array_elements(r.taken_lots) l
           WHERE (l ->> 1)::timestamptz <= r.redeemed_at""",
    ),
    (
        "TOTALS-2 the folded totals equal the ledger's sums up to the watermark",
        """SELECT count(*) FROM (
               SELECT vendor_id, (created_at AT TIME ZONE 'UTC')::date AS day, type, sum(amount) AS points,
                      count(*) AS entries
               FROM ledger_entries WHERE id <= (SELECT folded_through FROM ledger_totals_watermark)
               GROUP BY 1, 2, 3) s
           FULL JOIN ledger_totals t USING (vendor_id, day, type)
           WHERE s.points IS DISTINCT FROM t.points OR s.entries IS DISTINCT FROM t.entries""",
    ),
    (
        "LIABILITY-2 the monthly totals equal the daily ones by month",
        """SELECT count(*) FROM (
               SELECT vendor_id, date_trunc('month', day)::date AS month, type, sum(points) AS points,
                      sum(entries) AS entries
               FROM ledger_totals GROUP BY 1, 2, 3) d
           FULL JOIN ledger_totals_monthly m USING (vendor_id, month, type)
           WHERE d.points IS DISTINCT FROM m.points OR d.entries IS DISTINCT FROM m.entries""",
    ),
    (
        "TOTALS-2 each customer's latest purchase is folded",
        """SELECT count(*) FROM (SELECT vendor_id, customer_id, max(created_at) AS last FROM transactions
                                 WHERE id <= (SELECT purchases_folded_through FROM ledger_totals_watermark)
                                 GROUP BY 1, 2) s
           FULL JOIN customer_activity a USING (vendor_id, customer_id)
           WHERE s.last IS DISTINCT FROM a.last_purchase_at""",
    ),
    (
        "DASHBOARD-7 each shop's kept customer count equals its customers not anonymized",
        """SELECT count(*) FROM (SELECT vendor_id, count(*) AS held FROM customers WHERE status <> 'anonymized'
                                 GROUP BY 1) c
           FULL JOIN (SELECT vendor_id, sum(held) AS held FROM customer_counts GROUP BY 1) k USING (vendor_id)
           WHERE coalesce(c.held, 0) <> coalesce(k.held, 0)""",
    ),
    (
        "DASHBOARD-8 the customers per day of their latest purchase equal customer_activity",
        """SELECT count(*) FROM (SELECT vendor_id, (last_purchase_at AT TIME ZONE 'UTC')::date AS day,
                                        count(*) AS customers FROM customer_activity GROUP BY 1, 2) a
           FULL JOIN activity_days d USING (vendor_id, day)
           WHERE coalesce(a.customers, 0) <> coalesce(d.customers, 0)""",
    ),
    (
        "DASHBOARD-5 the branch totals equal the purchases and redemptions behind their markers",
        """SELECT count(*) FROM (
               SELECT vendor_id, day, branch_id, sum(purchases) AS purchases, sum(amount) AS amount,
                      sum(redemptions) AS redemptions
               FROM (SELECT vendor_id, (created_at AT TIME ZONE 'UTC')::date AS day,
                            coalesce(branch_id, 0) AS branch_id, 1 AS purchases, total_amount AS amount,
                            0 AS redemptions
                     FROM transactions WHERE id <= (SELECT branch_purchases_through FROM ledger_totals_watermark)
                     UNION ALL
                     SELECT vendor_id, (redeemed_at AT TIME ZONE 'UTC')::date, coalesce(branch_id, 0), 0, 0, 1
                     FROM redemptions
                     WHERE ledger_entry_id <= (SELECT branch_entries_through FROM ledger_totals_watermark)) raw
               GROUP BY 1, 2, 3) s
           FULL JOIN branch_totals b USING (vendor_id, day, branch_id)
           WHERE s.purchases IS DISTINCT FROM b.purchases OR s.amount IS DISTINCT FROM b.amount
              OR s.redemptions IS DISTINCT FROM b.redemptions""",
    ),
    (
        "the sequences hand out ids above every row's",
        """SELECT count(*) FROM (VALUES
               ((SELECT max(id) FROM ledger_entries), 'ledger_entries_id_seq'),
               ((SELECT max(id) FROM point_lots), 'point_lots_id_seq'),
               ((SELECT max(id) FROM transactions), 'transactions_id_seq'),
               ((SELECT max(id) FROM transaction_items), 'transaction_items_id_seq'),
               ((SELECT max(id) FROM redemptions), 'redemptions_id_seq'),
               ((SELECT max(id) FROM customers), 'customers_id_seq')) m(top, seq)
           WHERE top >= (SELECT last_value FROM pg_sequences WHERE sequencename = seq)""",
    ),
]

SIZES = """
SELECT (SELECT count(*) FROM customers WHERE vendor_id = 1), (SELECT count(*) FROM customers),
       (SELECT count(*) FROM ledger_entries WHERE vendor_id = 1), (SELECT count(*) FROM ledger_entries),
       (SELECT count(*) FROM transactions WHERE vendor_id = 1), (SELECT count(*) FROM redemptions WHERE vendor_id = 1),
       (SELECT count(*) FROM events WHERE vendor_id = 1), (SELECT count(*) FROM point_lots),
       (SELECT count(*) FROM point_lots WHERE remaining > 0 AND expires_at < now()),
       (SELECT count(*) FROM ledger_entries WHERE vendor_id = 1 AND wallet_id = 1),
       (SELECT count(*) FROM vendors)
"""
SIZE_NAMES = (
    "large vendor's customers",
    "customers",
    "large vendor's entries",
    "entries",
    "large vendor's purchases",
    "large vendor's redemptions",
    "large vendor's events",
    "lots",
    "open lots past their end",
    "heavy customer's entries",
    "vendors",
)


def check(url: str, sizes: Sizes, say: Callable[[str], None]) -> dict[str, int]:
    """Run every check (raising on the first that finds a broken row); answer the sizes reached."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET work_mem = '256MB'")
        for name, query in CHECKS:
            began = time.monotonic()
            row = conn.execute(query).fetchone()
            broken = int(row[0]) if row else -1
            say(f"scale: check {name}: {broken} broken ({time.monotonic() - began:.1f} s)")
            if broken != 0:
                raise RuntimeError(f"the scale data breaks a rule: {name} ({broken} rows)")
        row = conn.execute(SIZES).fetchone()
    reached: dict[str, int] = dict(zip(SIZE_NAMES, (int(v) for v in row or ()), strict=True))
    if reached["heavy customer's entries"] != sizes.heavy:
        raise RuntimeError(f"the heavy customer holds {reached['heavy customer' + chr(39) + 's entries']} entries")
    # a generator that quietly places fewer rows than asked measures another deployment than the one named
    for name, asked in (
        ("large vendor's purchases", sizes.transactions),
        ("large vendor's redemptions", sizes.redemptions),
    ):
        if abs(reached[name] - asked) > asked / 100:
            raise RuntimeError(f"the {name} are {reached[name]:,} of the {asked:,} asked (more than 1% off)")
    say("scale: sizes " + ", ".join(f"{k} {v:,}" for k, v in reached.items()))
    return reached
