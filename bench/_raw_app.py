"""The yardstick of the request-path benchmark: a bare ASGI app that runs the till's SQL on a psycopg
``AsyncConnectionPool`` and nothing else (no auth, no limiter, no validation framework).

It answers the same URLs as the service, so one wrk script drives both:

- ``GET /api/v1/customers/lookup?identifier=<card>``: one indexed SELECT returning the customer
  resource's fields (profile, balance, identifiers);
- ``POST /api/v1/customers/{id}/wallet/adjust``: BEGIN; lock the wallet; idempotency key check;
  insert the ledger entry and its lot; update the wallet; COMMIT.

Served by granian (``granian --interface asgi bench._raw_app:app``); configured by environment:
``BENCH_RAW_DATABASE_URL``, ``BENCH_RAW_VENDOR_ID`` and ``BENCH_RAW_POOL`` (connections per process,
opened at start and kept, so a steady load opens no session).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, MutableMapping
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs

import msgspec
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

LOOKUP = """
SELECT c.id, c.first_name, c.last_name, c.email, c.phone, c.date_of_birth, c.customer_since,
       c.external_id, c.locale, c.status, c.marketing_consent, c.marketing_consent_statement_version,
       c.merged_into_id, c.created_at, c.updated_at, coalesce(w.balance, 0) AS balance,
       (SELECT coalesce(json_agg(json_build_array(i.type, i.value, i.active)
                                 ORDER BY i.assigned_at NULLS FIRST, i.id), '[]'::json)
          FROM customer_identifiers i
         WHERE i.vendor_id = c.vendor_id AND i.customer_id = c.id) AS identifier_list
  FROM customer_identifiers f
  JOIN customers c ON c.vendor_id = f.vendor_id AND c.id = f.customer_id
  LEFT JOIN wallets w ON w.vendor_id = c.vendor_id AND w.customer_id = c.id
 WHERE f.vendor_id = %(vendor)s AND lower(f.value) = lower(%(value)s) AND f.active
   AND c.status <> 'anonymized'
"""

LOCK_WALLET = """
SELECT w.id, w.balance FROM customers c
  JOIN wallets w ON w.vendor_id = c.vendor_id AND w.customer_id = c.id
 WHERE c.vendor_id = %(vendor)s AND c.id = %(customer)s AND c.status <> 'anonymized'
   FOR UPDATE OF w
"""

KEY_CHECK = """
SELECT id, amount FROM ledger_entries
 WHERE wallet_id = %(wallet)s AND type = 'adjust' AND idempotency_key = %(key)s
"""

INSERT_ENTRY = """
INSERT INTO ledger_entries (vendor_id, wallet_id, type, amount, running_balance, reason, causer_type,
                            causer_id, idempotency_key, created_at, updated_at)
VALUES (%(vendor)s, %(wallet)s, 'adjust', %(amount)s, %(balance)s, %(reason)s, 'api_client', 'raw', %(key)s,
        %(now)s, %(now)s)
RETURNING id
"""

INSERT_LOT = """
INSERT INTO point_lots (vendor_id, wallet_id, entry_id, points, remaining, expires_at, created_at, updated_at)
VALUES (%(vendor)s, %(wallet)s, %(entry)s, %(amount)s, %(amount)s, NULL, %(now)s, %(now)s)
"""

UPDATE_WALLET = "UPDATE wallets SET balance = %(balance)s, updated_at = %(now)s WHERE id = %(wallet)s"


class Adjust(msgspec.Struct):
    amount: int
    reason: str
    idempotency_key: str


_encode = msgspec.json.Encoder().encode
_adjust = msgspec.json.Decoder(Adjust).decode
_JSON = [(b"content-type", b"application/json")]
VENDOR = int(os.environ.get("BENCH_RAW_VENDOR_ID", "1"))
pool = AsyncConnectionPool(
    os.environ.get("BENCH_RAW_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres"),
    min_size=int(os.environ.get("BENCH_RAW_POOL", "16")),
    max_size=int(os.environ.get("BENCH_RAW_POOL", "16")),
    max_idle=timedelta(hours=1).total_seconds(),
    # one statement needs no BEGIN/COMMIT round trips; the adjustment opens its own transaction
    kwargs={"autocommit": True},
    open=False,
)


async def _answer(send: Send, status: int, body: object) -> None:
    await send({"type": "http.response.start", "status": status, "headers": _JSON})
    await send({"type": "http.response.body", "body": _encode(body)})


async def lookup(identifier: str) -> tuple[int, object]:
    async with pool.connection() as conn:
        cursor = await conn.cursor(row_factory=dict_row).execute(LOOKUP, {"vendor": VENDOR, "value": identifier})
        row = await cursor.fetchone()
    if row is None:
        return 404, {"error": {"code": "CUSTOMER_NOT_FOUND"}}
    identifiers = [{"type": t, "value": v, "active": a} for t, v, a in row.pop("identifier_list")]
    cards = [i["value"] for i in identifiers if i["type"] == "loyalty_card" and i["active"]]
    row["customer_since"] = row["customer_since"] or row["created_at"].date()
    # the resource's wire names (contract 5 "Customers"); a merged account alone carries merged_into_id
    row["marketingConsent"] = row.pop("marketing_consent")
    row["marketingConsentStatementVersion"] = row.pop("marketing_consent_statement_version")
    row["is_deactivated"] = row["status"] == "deactivated"
    if row["merged_into_id"] is None:
        del row["merged_into_id"]
    return 200, {"data": {**row, "loyalty_card_code": cards[-1] if cards else None, "identifiers": identifiers}}


async def adjust(customer: int, payload: Adjust) -> tuple[int, object]:
    now = datetime.now(UTC)
    async with pool.connection() as conn, conn.transaction():
        found = await (await conn.execute(LOCK_WALLET, {"vendor": VENDOR, "customer": customer})).fetchone()
        if found is None:
            return 404, {"error": {"code": "CUSTOMER_NOT_FOUND"}}
        wallet, balance = found
        key = {"wallet": wallet, "key": payload.idempotency_key}
        previous = await (await conn.execute(KEY_CHECK, key)).fetchone()
        if previous is not None:
            return 200, {"data": {"id": previous[0], "amount": previous[1]}}
        balance += payload.amount
        values = {
            **key,
            "vendor": VENDOR,
            "amount": payload.amount,
            "balance": balance,
            "reason": payload.reason,
            "now": now,
        }
        entry = await (await conn.execute(INSERT_ENTRY, values)).fetchone()
        assert entry is not None
        await conn.execute(INSERT_LOT, {**values, "entry": entry[0]})
        await conn.execute(UPDATE_WALLET, values)
    return 201, {
        "data": {
            "id": entry[0],
            "wallet_id": wallet,
            "type": "adjust",
            "amount": payload.amount,
            "running_balance": balance,
            "reason": payload.reason,
            "causer_type": "api_client",
            "causer_id": "raw",
            "created_at": now,
        }
    }


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await pool.open(wait=True)
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await pool.close()
            await send({"type": "lifespan.shutdown.complete"})
            return


async def _body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        await _lifespan(receive, send)
        return
    path, method = scope["path"], scope["method"]
    if method == "GET" and path == "/api/v1/customers/lookup":
        query = parse_qs(scope["query_string"].decode())
        await _answer(send, *await lookup(query.get("identifier", [""])[0]))
    elif method == "POST" and path.startswith("/api/v1/customers/") and path.endswith("/wallet/adjust"):
        customer = int(path.split("/")[4])
        await _answer(send, *await adjust(customer, _adjust(await _body(receive))))
    else:
        await _answer(send, 404, {"error": {"code": "ROUTE_NOT_FOUND"}})
