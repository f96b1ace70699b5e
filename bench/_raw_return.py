"""The raw-SQL return, the yardstick of ``POST /api/v1/transactions/{id}/returns`` in ``bench.returns``.

What any implementation of a return must do at the least, as plain psycopg statements in one
transaction: check the key, lock the purchase (returns of one purchase must queue, or their amounts
could pass its total), lock its customer's wallet, prorate the points cumulatively, and when points
are due insert the ``return`` entry, take them from the lots that end first and lower the balance;
then insert the return and move the purchase's totals, COMMIT. No merge family is followed (the
bench merges nothing), no branch is read and nothing past its end is expired: everything else the
service does is counted against it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec
from psycopg import AsyncConnection

KEY_CHECK = """
SELECT id, transaction_id, amount, points_reversed FROM transaction_returns
 WHERE vendor_id = %(vendor)s AND idempotency_key = %(key)s
"""

LOCK_PURCHASE = """
SELECT customer_id, total_amount, points_earned, returned_amount FROM transactions
 WHERE vendor_id = %(vendor)s AND id = %(transaction)s
   FOR UPDATE
"""

LOCK_WALLET = """
SELECT id, balance FROM wallets WHERE vendor_id = %(vendor)s AND customer_id = %(customer)s FOR UPDATE
"""

INSERT_ENTRY = """
INSERT INTO ledger_entries (vendor_id, wallet_id, type, amount, running_balance, reason, causer_type,
                            causer_id, idempotency_key, created_at, updated_at)
VALUES (%(vendor)s, %(wallet)s, 'return', %(amount)s, %(balance)s, 'return', 'api_client', 'raw', %(key)s,
        %(now)s, %(now)s)
RETURNING id
"""

OPEN_LOTS = """
SELECT id, remaining FROM point_lots WHERE wallet_id = %(wallet)s AND remaining > 0
 ORDER BY expires_at IS NULL, expires_at, id
"""

UPDATE_LOT = """
UPDATE point_lots SET remaining = %(remaining)s, updated_at = %(now)s WHERE vendor_id = %(vendor)s AND id = %(lot)s
"""

UPDATE_WALLET = (
    "UPDATE wallets SET balance = %(balance)s, updated_at = %(now)s WHERE vendor_id = %(vendor)s AND id = %(wallet)s"
)

INSERT_RETURN = """
INSERT INTO transaction_returns (vendor_id, transaction_id, idempotency_key, amount, points_reversed,
                                 points_unrecovered, ledger_entry_id, created_at, updated_at)
VALUES (%(vendor)s, %(transaction)s, %(key)s, %(returned)s, %(taken)s, %(short)s, %(entry)s, %(now)s, %(now)s)
RETURNING id
"""

MOVE_TOTALS = """
UPDATE transactions SET returned_amount = returned_amount + %(returned)s,
                        points_reversed = points_reversed + %(taken)s, updated_at = %(now)s
 WHERE vendor_id = %(vendor)s AND id = %(transaction)s
"""


class Return(msgspec.Struct):
    idempotency_key: str
    amount: int


decode = msgspec.json.Decoder(Return).decode


async def give_back(conn: AsyncConnection[Any], vendor: int, transaction: int, body: Return) -> tuple[int, object]:
    """``conn`` is in autocommit; the write opens its own transaction."""
    now = datetime.now(UTC)
    values: dict[str, Any] = {
        "vendor": vendor,
        "transaction": transaction,
        "key": body.idempotency_key,
        "returned": body.amount,
        "now": now,
    }
    async with conn.transaction():
        earlier = await (await conn.execute(KEY_CHECK, values)).fetchone()
        if earlier is not None:
            return 200, {"data": {"id": earlier[0], "transaction_id": earlier[1], "amount": earlier[2]}}
        bought = await (await conn.execute(LOCK_PURCHASE, values)).fetchone()
        if bought is None:
            return 404, {"error": {"code": "TRANSACTION_NOT_FOUND"}}
        values["customer"], total, earned, returned = bought
        if body.amount < 1 or body.amount > total - returned:
            return 422, {"error": {"code": "VALIDATION_ERROR"}}
        wallet = await (await conn.execute(LOCK_WALLET, values)).fetchone()
        assert wallet is not None
        values["wallet"], balance = wallet
        due = earned * (returned + body.amount) // total - earned * returned // total
        taken = min(due, balance)
        values.update(taken=taken, short=due - taken, entry=None)
        if taken > 0:
            values.update(amount=-taken, balance=balance - taken)
            entry = await (await conn.execute(INSERT_ENTRY, values)).fetchone()
            assert entry is not None
            values["entry"] = entry[0]
            left = taken
            for lot, remaining in await (await conn.execute(OPEN_LOTS, values)).fetchall():
                if left == 0:
                    break
                take = min(remaining, left)
                left -= take
                await conn.execute(
                    UPDATE_LOT, {"remaining": remaining - take, "now": now, "vendor": vendor, "lot": lot}
                )
            await conn.execute(UPDATE_WALLET, values)
        made = await (await conn.execute(INSERT_RETURN, values)).fetchone()
        assert made is not None
        await conn.execute(MOVE_TOTALS, values)
    return 201, {
        "data": {
            "id": made[0],
            "transaction_id": transaction,
            "idempotency_key": body.idempotency_key,
            "amount": body.amount,
            "items": [],
            "reason": None,
            "branch": None,
            "points_reversed": taken,
            "points_unrecovered": due - taken,
            "created_at": now,
        }
    }
