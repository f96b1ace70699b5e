"""The raw-SQL earn write, the yardstick of ``POST /api/v1/transactions`` in the request-path benchmark.

What any implementation of the purchase must do at the least, as plain psycopg statements in one
transaction: find the customer and its wallet through the identifier's unique index, check the key,
insert the transaction and its lines, credit the wallet, insert the ledger entry and its lot,
COMMIT. The points are the base rate alone, computed inline (no engine, no campaigns, no meter):
everything else the service does is counted against it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec
from psycopg import AsyncConnection
from psycopg.types.json import Jsonb

FIND = """
SELECT c.id, w.id FROM customer_identifiers i
  JOIN customers c ON c.vendor_id = i.vendor_id AND c.id = i.customer_id
  JOIN wallets w ON w.vendor_id = c.vendor_id AND w.customer_id = c.id
 WHERE i.vendor_id = %(vendor)s AND lower(i.value) = lower(%(identifier)s) AND i.active
"""

KEY_CHECK = "SELECT id, points_earned FROM transactions WHERE vendor_id = %(vendor)s AND idempotency_key = %(key)s"

INSERT_TRANSACTION = """
INSERT INTO transactions (vendor_id, customer_id, idempotency_key, total_amount, points_earned, rules_applied,
                          created_at, updated_at)
VALUES (%(vendor)s, %(customer)s, %(key)s, %(total)s, %(points)s, %(rules)s, %(now)s, %(now)s)
RETURNING id
"""

INSERT_LINE = """
INSERT INTO transaction_items (vendor_id, transaction_id, position, name, sku, quantity, unit_price, line_total,
                               created_at, updated_at)
VALUES (%(vendor)s, %(transaction)s, %(position)s, %(name)s, %(sku)s, %(quantity)s, %(price)s, %(line)s,
        %(now)s, %(now)s)
"""

CREDIT = """
UPDATE wallets SET balance = balance + %(points)s, updated_at = %(now)s
 WHERE vendor_id = %(vendor)s AND id = %(wallet)s RETURNING balance
"""

INSERT_ENTRY = """
INSERT INTO ledger_entries (vendor_id, wallet_id, type, amount, running_balance, causer_type, causer_id,
                            idempotency_key, created_at, updated_at)
VALUES (%(vendor)s, %(wallet)s, 'earn', %(points)s, %(balance)s, 'api_client', 'raw', %(key)s, %(now)s, %(now)s)
RETURNING id
"""

INSERT_LOT = """
INSERT INTO point_lots (vendor_id, wallet_id, entry_id, points, remaining, expires_at, created_at, updated_at)
VALUES (%(vendor)s, %(wallet)s, %(entry)s, %(points)s, %(points)s, NULL, %(now)s, %(now)s)
"""


class Line(msgspec.Struct):
    name: str
    quantity: int
    unit_price: int
    sku: str | None = None


class Purchase(msgspec.Struct):
    identifier: str
    idempotency_key: str
    total_amount: int
    items: list[Line] = []


decode = msgspec.json.Decoder(Purchase).decode


async def earn(conn: AsyncConnection[Any], vendor: int, purchase: Purchase) -> tuple[int, object]:
    """``conn`` is in autocommit; the write opens its own transaction."""
    now = datetime.now(UTC)
    values: dict[str, Any] = {
        "vendor": vendor,
        "identifier": purchase.identifier,
        "key": purchase.idempotency_key,
        "total": purchase.total_amount,
        "now": now,
    }
    async with conn.transaction():
        found = await (await conn.execute(FIND, values)).fetchone()
        if found is None:
            return 404, {"error": {"code": "CUSTOMER_NOT_FOUND"}}
        values["customer"], values["wallet"] = found
        previous = await (await conn.execute(KEY_CHECK, values)).fetchone()
        if previous is not None:
            return 200, {"data": {"id": previous[0], "points_earned": previous[1]}}
        points = purchase.total_amount // 100
        rules = [{"rule_id": 1, "rule_type": "base_rate", "points_earned": points}]
        values.update(points=points, rules=Jsonb(rules))
        transaction = await (await conn.execute(INSERT_TRANSACTION, values)).fetchone()
        assert transaction is not None
        for position, line in enumerate(purchase.items, start=1):
            await conn.execute(
                INSERT_LINE,
                {
                    **values,
                    "transaction": transaction[0],
                    "position": position,
                    "name": line.name,
                    "sku": line.sku,
                    "quantity": line.quantity,
                    "price": line.unit_price,
                    "line": line.quantity * line.unit_price,
                },
            )
        if points > 0:
            balance = await (await conn.execute(CREDIT, values)).fetchone()
            assert balance is not None
            entry = await (await conn.execute(INSERT_ENTRY, {**values, "balance": balance[0]})).fetchone()
            assert entry is not None
            await conn.execute(INSERT_LOT, {**values, "entry": entry[0]})
    return 201, {"data": {"id": transaction[0], "points_earned": points, "rules_applied": rules}}
