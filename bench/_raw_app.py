"""The yardstick of the request-path benchmark: a bare ASGI app that runs the till's SQL on a psycopg
``AsyncConnectionPool`` and nothing else (no auth, no limiter, no validation framework).

It answers the same URLs as the service, so one wrk script drives both:

- ``GET /api/v1/customers/lookup?identifier=<card>``: one indexed SELECT returning the customer
  resource's fields (profile, balance, identifiers);
- ``POST /api/v1/customers/{id}/wallet/adjust``: BEGIN; lock the wallet; idempotency key check;
  insert the ledger entry and its lot; update the wallet; COMMIT.
- ``POST /api/v1/redemptions`` (``bench.redemptions``): BEGIN; the vendor's key lock; the customer
  found by card with its wallet locked; key check; the reward (with its branch count and the
  vendor's code prefix); insert the ledger entry; take the lots soonest-ending first; update the
  wallet; insert the redemption with a new code; COMMIT. The writes are the service's.
- ``POST /api/v1/redemptions/{code}/verify``: one conditional UPDATE ... RETURNING, as the service's.

- ``POST /api/v1/transactions``: the earn write of ``bench._raw_earn``;
- ``POST /api/v1/transactions/{id}/returns`` (``bench.returns``): the return of ``bench._raw_return``;
- ``GET /api/v1/rewards`` (``bench.mix``): the list's count, first page and the page's branches.

A benchmark of several vendors (``bench.mix``) names each request's vendor in ``X-Bench-Vendor``.

Served by granian (``granian --interface asgi bench._raw_app:app``); configured by environment:
``BENCH_RAW_DATABASE_URL``, ``BENCH_RAW_VENDOR_ID`` and ``BENCH_RAW_POOL`` (connections per process,
opened at start and kept, so a steady load opens no session).
"""

from __future__ import annotations

import os
import secrets
import string
from collections.abc import Awaitable, Callable, MutableMapping
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs

import msgspec
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from bench import _raw_earn, _raw_return

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
 WHERE vendor_id = %(vendor)s AND wallet_id = %(wallet)s AND type = 'adjust' AND idempotency_key = %(key)s
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

INSERT_REDEEM_ENTRY = INSERT_ENTRY.replace("'adjust'", "'redeem'")

UPDATE_WALLET = (
    "UPDATE wallets SET balance = %(balance)s, updated_at = %(now)s WHERE vendor_id = %(vendor)s AND id = %(wallet)s"
)


# the redemption's SQL: the service's writes (statement for statement), its reads folded together
FIND_AND_LOCK = """
SELECT c.id, w.id, w.balance FROM customer_identifiers f
  JOIN customers c ON c.vendor_id = f.vendor_id AND c.id = f.customer_id
  JOIN wallets w ON w.vendor_id = c.vendor_id AND w.customer_id = c.id
 WHERE f.vendor_id = %(vendor)s AND lower(f.value) = lower(%(identifier)s) AND f.active
   AND c.status NOT IN ('anonymized', 'deactivated')
   FOR UPDATE OF w
"""

EARLIER = "SELECT id FROM redemptions WHERE vendor_id = %(vendor)s AND idempotency_key = %(key)s"

REWARD = """
SELECT r.id, r.name, r.type, r.point_cost, r.discount_type, r.discount_value, r.product_reference,
       r.payment_amount, r.code_valid_for_hours, v.code_prefix,
       (SELECT count(*) FROM reward_branches b WHERE b.vendor_id = r.vendor_id AND b.reward_id = r.id)
  FROM rewards r JOIN vendors v ON v.id = r.vendor_id
 WHERE r.vendor_id = %(vendor)s AND r.id = %(reward)s AND r.deleted_at IS NULL AND r.status = 'active'
   AND r.total_stock IS NULL AND r.max_redemptions_per_customer IS NULL
"""

OPEN_LOTS = """
SELECT id, remaining, expires_at FROM point_lots WHERE wallet_id = %(wallet)s AND remaining > 0
 ORDER BY expires_at IS NULL, expires_at, id
"""

UPDATE_LOT = """
UPDATE point_lots SET remaining = %(remaining)s, updated_at = %(now)s WHERE vendor_id = %(vendor)s AND id = %(lot)s
"""

INSERT_REDEMPTION = """
INSERT INTO redemptions (vendor_id, reward_id, customer_id, branch_id, confirmation_code, status, idempotency_key,
                         points_deducted, remaining_balance, ledger_entry_id, taken_lots, reward_name, reward_type,
                         discount_type, discount_value, product_reference, payment_amount, redeemed_at, expires_at,
                         created_at, updated_at)
VALUES (%(vendor)s, %(reward)s, %(customer)s, NULL, %(code)s, 'valid', %(key)s, %(cost)s, %(balance)s, %(entry)s,
        %(lots)s, %(name)s, %(type)s, %(discount_type)s, %(discount_value)s, %(product_reference)s,
        %(payment_amount)s, %(now)s, %(expires)s, %(now)s, %(now)s)
ON CONFLICT (vendor_id, confirmation_code) DO NOTHING
RETURNING id
"""

VERIFY = """
UPDATE redemptions r SET status = 'used', used_at = %(now)s, updated_at = %(now)s
 WHERE r.vendor_id = %(vendor)s AND r.confirmation_code = upper(%(code)s) AND r.status = 'valid'
   AND (r.expires_at IS NULL OR r.expires_at > %(now)s)
   AND EXISTS (SELECT 1 FROM customers c
                WHERE c.vendor_id = r.vendor_id AND c.id = r.customer_id AND c.status <> 'anonymized')
RETURNING r.id, r.confirmation_code, r.reward_id, r.reward_name, r.reward_type, r.customer_id, r.points_deducted,
          r.branch_id, r.redeemed_at, r.expires_at, r.used_at, r.cancelled_at, r.discount_type, r.discount_value,
          r.product_reference, r.payment_amount
"""

REWARDS_COUNT = "SELECT count(*) FROM rewards WHERE vendor_id = %(vendor)s AND deleted_at IS NULL"

REWARDS_PAGE = """
SELECT id, type, name, description, image_url, point_cost, payment_amount, total_stock, remaining_stock, status,
       available_from, available_until, discount_type, discount_value, product_reference, code_valid_for_hours,
       max_redemptions_per_customer
  FROM rewards WHERE vendor_id = %(vendor)s AND deleted_at IS NULL ORDER BY id LIMIT 20
"""

REWARD_BRANCHES = """
SELECT rb.reward_id, b.external_id, b.name, b.type FROM reward_branches rb
  JOIN branches b ON b.vendor_id = rb.vendor_id AND b.id = rb.branch_id
 WHERE rb.vendor_id = %(vendor)s AND rb.reward_id = ANY (%(ids)s) ORDER BY b.external_id
"""

CODE_STATE = "SELECT status FROM redemptions WHERE vendor_id = %(vendor)s AND confirmation_code = upper(%(code)s)"


class Adjust(msgspec.Struct):
    amount: int
    reason: str
    idempotency_key: str


class Redeem(msgspec.Struct):
    identifier: str
    reward_id: int
    idempotency_key: str


_encode = msgspec.json.Encoder().encode
_adjust = msgspec.json.Decoder(Adjust).decode
_redeem = msgspec.json.Decoder(Redeem).decode
_ALPHABET = string.ascii_uppercase + string.digits
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


async def lookup(vendor: int, identifier: str) -> tuple[int, object]:
    async with pool.connection() as conn:
        cursor = await conn.cursor(row_factory=dict_row).execute(LOOKUP, {"vendor": vendor, "value": identifier})
        row = await cursor.fetchone()
    if row is None:
        return 404, {"error": {"code": "CUSTOMER_NOT_FOUND"}}
    identifiers = [{"type": t, "value": v, "active": a} for t, v, a in row.pop("identifier_list")]
    cards = [i["value"] for i in identifiers if i["type"] == "loyalty_card" and i["active"]]
    row["customer_since"] = row["customer_since"] or row["created_at"].date()
    # the resource's wire names (CUSTOMER-8); a merged account alone carries merged_into_id
    row["marketingConsent"] = row.pop("marketing_consent")
    row["marketingConsentStatementVersion"] = row.pop("marketing_consent_statement_version")
    row["is_deactivated"] = row["status"] == "deactivated"
    if row["merged_into_id"] is None:
        del row["merged_into_id"]
    return 200, {"data": {**row, "loyalty_card_code": cards[-1] if cards else None, "identifiers": identifiers}}


async def adjust(vendor: int, customer: int, payload: Adjust) -> tuple[int, object]:
    now = datetime.now(UTC)
    async with pool.connection() as conn, conn.transaction():
        found = await (await conn.execute(LOCK_WALLET, {"vendor": vendor, "customer": customer})).fetchone()
        if found is None:
            return 404, {"error": {"code": "CUSTOMER_NOT_FOUND"}}
        wallet, balance = found
        key = {"vendor": vendor, "wallet": wallet, "key": payload.idempotency_key}
        previous = await (await conn.execute(KEY_CHECK, key)).fetchone()
        if previous is not None:
            return 200, {"data": {"id": previous[0], "amount": previous[1]}}
        balance += payload.amount
        values = {
            **key,
            "vendor": vendor,
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


def _redemption(row: tuple[Any, ...]) -> dict[str, object]:
    """The Redemption resource from VERIFY's columns (the bench's reward is a branchless one)."""
    (rid, code, reward, name, kind, customer, cost, _, redeemed, expires, used, cancelled, *specific) = row
    return {
        "redemption_id": rid,
        "confirmation_code": code,
        "status": "used" if used else "valid",
        "reward": {"id": reward, "name": name, "type": kind},
        "customer_id": customer,
        "points_deducted": cost,
        "branch": None,
        "redeemed_at": redeemed,
        "expires_at": expires,
        "used_at": used,
        "cancelled_at": cancelled,
        "type_specific_data": dict(
            zip(("discount_type", "discount_value", "product_reference", "payment_amount"), specific, strict=True)
        ),
    }


async def redeem(vendor: int, payload: Redeem) -> tuple[int, object]:
    now = datetime.now(UTC)
    values: dict[str, Any] = {"vendor": vendor, "key": payload.idempotency_key, "now": now}
    async with pool.connection() as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (vendor, "redemption:" + values["key"]))
        found = await (await conn.execute(FIND_AND_LOCK, {**values, "identifier": payload.identifier})).fetchone()
        if found is None:
            return 404, {"error": {"code": "CUSTOMER_NOT_FOUND"}}
        customer, wallet, balance = found
        if await (await conn.execute(EARLIER, values)).fetchone() is not None:
            return 409, {"error": {"code": "IDEMPOTENCY_KEY_CONFLICT"}}  # the bench sends every key once
        reward = await (await conn.execute(REWARD, {**values, "reward": payload.reward_id})).fetchone()
        if reward is None or reward[-1]:
            return 404, {"error": {"code": "REWARD_NOT_FOUND"}}  # the bench's reward is a plain one
        rid, name, kind, cost, d_type, d_value, product, payment, hours, prefix, _ = reward
        if balance < cost:
            return 422, {"error": {"code": "INSUFFICIENT_POINTS"}}
        balance -= cost
        values |= {"wallet": wallet, "customer": customer, "reward": rid, "cost": cost, "balance": balance}
        # the deduction's entry carries no key of its own: the redemption holds it, as the service does
        entry_values = {**values, "key": None, "amount": -cost, "reason": "redemption"}
        entry = await (await conn.execute(INSERT_REDEEM_ENTRY, entry_values)).fetchone()
        assert entry is not None
        taken, left = [], cost
        for lot, remaining, lot_expires in await (await conn.execute(OPEN_LOTS, values)).fetchall():
            if left == 0:
                break
            take = min(remaining, left)
            left -= take
            taken.append([take, lot_expires.isoformat() if lot_expires else None])
            await conn.execute(UPDATE_LOT, {"remaining": remaining - take, "now": now, "vendor": vendor, "lot": lot})
        await conn.execute(UPDATE_WALLET, values)
        values |= {
            "entry": entry[0],
            "lots": msgspec.json.encode(taken).decode(),
            "name": name,
            "type": kind,
            "discount_type": d_type,
            "discount_value": d_value,
            "product_reference": product,
            "payment_amount": payment,
            "expires": now + timedelta(hours=hours) if hours else None,
        }
        made = None
        while made is None:
            values["code"] = (prefix or "CODE") + "-" + "".join(secrets.choice(_ALPHABET) for _ in range(8))
            made = await (await conn.execute(INSERT_REDEMPTION, values)).fetchone()
    row = (made[0], values["code"], rid, name, kind, customer, cost, None, now, values["expires"], None, None)
    return 201, {"data": {**_redemption((*row, d_type, d_value, product, payment)), "remaining_balance": balance}}


async def verify(vendor: int, code: str) -> tuple[int, object]:
    now = datetime.now(UTC)
    async with pool.connection() as conn:
        row = await (await conn.execute(VERIFY, {"vendor": vendor, "code": code, "now": now})).fetchone()
        if row is not None:
            return 200, {"data": _redemption(row)}
        state = await (await conn.execute(CODE_STATE, {"vendor": vendor, "code": code})).fetchone()
    if state is None:
        return 404, {"error": {"code": "REDEMPTION_NOT_FOUND"}}
    return 409, {"error": {"code": "CODE_ALREADY_USED" if state[0] == "used" else "VERIFICATION_FAILED"}}


async def rewards(vendor: int) -> tuple[int, object]:
    """The reward list's first page as the service reads it: the count, the page, the page's branches."""
    values = {"vendor": vendor}
    async with pool.connection() as conn:
        total = await (await conn.execute(REWARDS_COUNT, values)).fetchone()
        page = await (await conn.cursor(row_factory=dict_row).execute(REWARDS_PAGE, values)).fetchall()
        ids = [row["id"] for row in page]
        branches = await (await conn.execute(REWARD_BRANCHES, {**values, "ids": ids})).fetchall() if ids else []
    by_reward: dict[int, list[dict[str, object]]] = {}
    for reward_id, key, name, kind in branches:
        by_reward.setdefault(reward_id, []).append({"external_id": key, "name": name, "type": kind})
    data = [{**row, "branches": by_reward.get(row["id"]), "customer_redemptions": None} for row in page]
    meta = {"total": total[0] if total else 0, "page": 1, "per_page": 20}
    return 200, {"data": data, "meta": meta}


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
    # no auth here: a benchmark of several vendors names the request's vendor in a header
    vendor = next((int(v) for k, v in scope["headers"] if k == b"x-bench-vendor"), VENDOR)
    if method == "GET" and path == "/api/v1/customers/lookup":
        query = parse_qs(scope["query_string"].decode())
        await _answer(send, *await lookup(vendor, query.get("identifier", [""])[0]))
    elif method == "GET" and path == "/api/v1/rewards":
        await _answer(send, *await rewards(vendor))
    elif method == "POST" and path.startswith("/api/v1/customers/") and path.endswith("/wallet/adjust"):
        customer = int(path.split("/")[4])
        await _answer(send, *await adjust(vendor, customer, _adjust(await _body(receive))))
    elif method == "POST" and path == "/api/v1/redemptions":
        await _answer(send, *await redeem(vendor, _redeem(await _body(receive))))
    elif method == "POST" and path.startswith("/api/v1/redemptions/") and path.endswith("/verify"):
        await _answer(send, *await verify(vendor, path.split("/")[4]))
    elif method == "POST" and path == "/api/v1/transactions":
        async with pool.connection() as conn:
            await _answer(send, *await _raw_earn.earn(conn, vendor, _raw_earn.decode(await _body(receive))))
    elif method == "POST" and path.startswith("/api/v1/transactions/") and path.endswith("/returns"):
        body = _raw_return.decode(await _body(receive))
        async with pool.connection() as conn:
            await _answer(send, *await _raw_return.give_back(conn, vendor, int(path.split("/")[4]), body))
    else:
        await _answer(send, 404, {"error": {"code": "ROUTE_NOT_FOUND"}})
