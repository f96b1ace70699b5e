"""The ledger invariant: for every wallet, balance = sum of its ledger amounts = the last running
balance >= 0; each entry's running balance is the previous one plus its amount; the open lots'
remainders sum to the balance. Answers the offending wallets, empty when all hold."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

LEDGER_INVARIANT = text("""
WITH entries AS (
    SELECT wallet_id, id, amount, running_balance,
           SUM(amount) OVER (PARTITION BY wallet_id ORDER BY id) AS running_sum,
           ROW_NUMBER() OVER (PARTITION BY wallet_id ORDER BY id DESC) AS newest
    FROM ledger_entries
), per_wallet AS (
    SELECT w.id AS wallet_id, w.balance,
           COALESCE((SELECT SUM(amount) FROM ledger_entries e WHERE e.wallet_id = w.id), 0) AS ledger_sum,
           COALESCE((SELECT running_balance FROM entries e WHERE e.wallet_id = w.id AND e.newest = 1), 0)
               AS last_running,
           COALESCE((SELECT SUM(remaining) FROM point_lots l WHERE l.wallet_id = w.id), 0) AS lots_sum,
           (SELECT COUNT(*) FROM entries e WHERE e.wallet_id = w.id AND e.running_balance <> e.running_sum)
               AS broken_runs,
           (SELECT COUNT(*) FROM point_lots l WHERE l.wallet_id = w.id AND (l.remaining < 0 OR l.remaining > l.points))
               AS broken_lots
    FROM wallets w
)
SELECT * FROM per_wallet
WHERE balance < 0 OR balance <> ledger_sum OR balance <> last_running OR balance <> lots_sum
   OR broken_runs > 0 OR broken_lots > 0
""")


async def ledger_violations(conn: Any) -> list[dict[str, Any]]:
    """``conn``: an AsyncSession or AsyncConnection."""
    rows = (await conn.execute(LEDGER_INVARIANT)).mappings().all()
    return [dict(r) for r in rows]


DANGLING_KEYS = text("""
SELECT 'redemptions.reward_id' AS key, r.vendor_id, r.id FROM redemptions r
 WHERE NOT EXISTS (SELECT 1 FROM rewards p WHERE p.vendor_id = r.vendor_id AND p.id = r.reward_id)
UNION ALL
SELECT 'redemptions.branch_id', r.vendor_id, r.id FROM redemptions r
 WHERE r.branch_id IS NOT NULL
   AND NOT EXISTS (SELECT 1 FROM branches p WHERE p.vendor_id = r.vendor_id AND p.id = r.branch_id)
UNION ALL
SELECT 'transactions.branch_id', t.vendor_id, t.id FROM transactions t
 WHERE t.branch_id IS NOT NULL
   AND NOT EXISTS (SELECT 1 FROM branches p WHERE p.vendor_id = t.vendor_id AND p.id = t.branch_id)
UNION ALL
SELECT 'transaction_returns.branch_id', t.vendor_id, t.id FROM transaction_returns t
 WHERE t.branch_id IS NOT NULL
   AND NOT EXISTS (SELECT 1 FROM branches p WHERE p.vendor_id = t.vendor_id AND p.id = t.branch_id)
""")
"""The keys a till-written row holds without a foreign key (TENANCY-5: a key to that one row would
share-lock it under every concurrent write): each names a row of its own vendor."""


async def dangling_keys(conn: Any) -> list[dict[str, Any]]:
    """Till rows whose reward or branch is not one of their vendor's; empty when all hold.
    ``conn``: an AsyncSession or AsyncConnection."""
    rows = (await conn.execute(DANGLING_KEYS)).mappings().all()
    return [dict(r) for r in rows]
