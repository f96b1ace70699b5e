"""FAULT-1: API processes killed with ``kill -9`` (each with its granian workers) and started again while
clients send purchases, adjustments, redemptions with their verifies, and registrations over both
ports. A client retries until it gets an answer, with the same key where the endpoint has one (on
the other port when its own is down). Afterwards:

- the ledger holds (LEDGER-1): every balance equals its entries and its open lots;
- every 2xx is in the database exactly once (a transaction, an adjustment entry, a redemption per
  key; a registered customer per address; a verified code is ``used``), and every key refused with
  a 4xx left nothing;
- a lost answer whose retry shows the first attempt landed counts as that success: 409
  IDENTIFIER_DUPLICATE for a registration, 422 CODE_ALREADY_USED for a verify;
- no answer is a 5xx other than 503 SERVICE_UNAVAILABLE (retried, as its Retry-After asks).

Bounded by ``LOYALTY_FAULT_SECONDS`` (how long the processes are being killed, default 20).
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import os
import random
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx
from sqlalchemy import text

from loyalty_core.db import make_engine
from tests.deployment.shop import Shop, open_shop, register_customers
from tests.support.deployment import Deployment
from tests.support.invariants import ledger_violations

FAULT_SECONDS = float(os.environ.get("LOYALTY_FAULT_SECONDS", "20"))
KILL_EVERY = 3.0
DOWN_FOR = 0.5
TASKS = 6
CUSTOMERS = 24
ATTEMPTS = 60
"""A request is given up (and the test fails) after this many attempts without an answer."""


@dataclass
class Outcome:
    """What the clients finally got, by operation."""

    answers: collections.Counter[tuple[str, int]] = field(default_factory=collections.Counter)
    transactions: dict[str, int] = field(default_factory=dict)  # key -> final status
    adjustments: dict[str, int] = field(default_factory=dict)
    redemptions: dict[str, int] = field(default_factory=dict)
    codes_verified: list[str] = field(default_factory=list)
    emails_registered: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    retried: int = 0


class Till:
    """A client that fails over between the deployment's ports and retries until it is answered."""

    def __init__(self, urls: list[str], shop: Shop, outcome: Outcome) -> None:
        self._clients = [httpx.AsyncClient(base_url=url, timeout=15) for url in urls]
        self._next = itertools.cycle(range(len(urls)))
        self._shop, self._outcome = shop, outcome

    async def close(self) -> None:
        for client in self._clients:
            await client.aclose()

    async def call(self, operation: str, method: str, path: str, body: dict[str, Any] | None) -> tuple[int, Any, int]:
        """The first answer that is not a dropped connection or a 503, with the attempts it took."""
        for attempt in range(1, ATTEMPTS + 1):
            client = self._clients[next(self._next)]
            try:
                response = await client.request(method, path, json=body, headers=self._shop.headers)
            except httpx.TransportError:
                self._outcome.retried += 1
                await asyncio.sleep(0.05)
                continue
            if response.status_code == 503:
                self._outcome.retried += 1
                await asyncio.sleep(0.2)
                continue
            self._outcome.answers[(operation, response.status_code)] += 1
            return response.status_code, response.json() if response.content else None, attempt
        raise AssertionError(f"{operation}: no answer after {ATTEMPTS} attempts")


async def _load(
    till: Till, outcome: Outcome, cards: list[str], ids: list[int], reward: int, done: asyncio.Event
) -> None:
    rng = random.Random(uuid.uuid4().int)
    while not done.is_set():
        roll = rng.random()
        key = uuid.uuid4().hex
        if roll < 0.4:
            quantity = rng.randint(1, 8)
            body = {
                "identifier": rng.choice(cards),
                "total_amount": 250 * quantity,
                "idempotency_key": key,
                "items": [{"name": "Coffee", "quantity": quantity, "unit_price": 250}],
            }
            status, _, _ = await till.call("transaction", "POST", "/api/v1/transactions", body)
            outcome.transactions[key] = status
        elif roll < 0.65:
            amount = rng.choice((7, -3))
            body = {"amount": amount, "reason": "k1", "idempotency_key": key}
            status, _, _ = await till.call("adjust", "POST", f"/api/v1/customers/{rng.choice(ids)}/wallet/adjust", body)
            outcome.adjustments[key] = status
        elif roll < 0.85:
            body = {"identifier": rng.choice(cards), "reward_id": reward, "idempotency_key": key}
            status, data, _ = await till.call("redeem", "POST", "/api/v1/redemptions", body)
            outcome.redemptions[key] = status
            if status in (200, 201):
                code = data["data"]["confirmation_code"]
                status, data, attempts = await till.call("verify", "POST", f"/api/v1/redemptions/{code}/verify", None)
                landed = status == 422 and attempts > 1 and data["error"]["code"] == "CODE_ALREADY_USED"
                if status == 200 or landed:
                    outcome.codes_verified.append(code)
                else:
                    outcome.failures.append(f"verify {code}: {status} {data}")
        else:
            email = f"k1-{key}@example.com"
            status, data, attempts = await till.call("register", "POST", "/api/v1/customers", {"email": email})
            landed = status == 409 and attempts > 1 and data["error"]["code"] == "IDENTIFIER_DUPLICATE"
            if status == 201 or landed:
                outcome.emails_registered.append(email)
            else:
                outcome.failures.append(f"register {email}: {status} {data}")


async def _killer(deployment: Deployment, until: float, done: asyncio.Event) -> int:
    """Both API entries at least once, then on until ``until``; the load stops when this does."""
    loop = asyncio.get_running_loop()
    kills = 0
    try:
        for name in itertools.cycle(("api_a", "api_b")):
            await asyncio.sleep(KILL_EVERY)
            if kills >= 2 and loop.time() >= until:
                return kills
            await asyncio.to_thread(deployment.kill, name)
            kills += 1
            await asyncio.sleep(DOWN_FOR)
            await asyncio.to_thread(deployment.start, name)
            # the next kill waits for this process to answer again: one port is always up
            await asyncio.to_thread(deployment.wait_answering, name)
    finally:
        done.set()
    raise AssertionError("unreachable: the cycle ends by returning")


async def test_writes_land_exactly_once_while_api_processes_are_killed(deployment: Deployment) -> None:
    async with httpx.AsyncClient(base_url=deployment.urls[0], timeout=30) as client:
        shop = await open_shop(client, deployment.admin_token)
        admin = {"Authorization": f"Bearer {deployment.admin_token}"}
        rule = {"name": "Euro", "points_per_unit": 1, "unit_amount": 100}
        made = await client.post(f"/admin/v1/vendors/{shop.vendor_id}/earn-rules", json=rule, headers=admin)
        assert made.status_code == 201, made.text
        body = {"type": "free_product", "name": "Coffee", "point_cost": 15}
        made = await client.post(f"/admin/v1/vendors/{shop.vendor_id}/rewards", json=body, headers=admin)
        assert made.status_code == 201, made.text
        reward = made.json()["data"]["id"]
        customers = await register_customers(client, shop, CUSTOMERS)
        for customer in customers:
            start = {"amount": 60, "reason": "start", "idempotency_key": f"start-{customer['id']}"}
            path = f"/api/v1/customers/{customer['id']}/wallet/adjust"
            assert (await client.post(path, json=start, headers=shop.headers)).status_code == 201
    cards = [customer["loyalty_card_code"] for customer in customers]
    ids = [customer["id"] for customer in customers]

    outcome = Outcome()
    tills = [Till(deployment.urls, shop, outcome) for _ in range(TASKS)]
    until = asyncio.get_running_loop().time() + FAULT_SECONDS
    done = asyncio.Event()
    try:
        loads = [_load(till, outcome, cards, ids, reward, done) for till in tills]
        *_, kills = await asyncio.gather(*loads, _killer(deployment, until, done))
    finally:
        for till in tills:
            await till.close()
    await asyncio.to_thread(deployment.wait_ready)

    print(f"FAULT-1: {kills} kills, {outcome.retried} retried attempts, answers {dict(outcome.answers)}")
    assert kills is not None  # the killer's count, the last of the gathered results
    assert kills >= 2
    assert outcome.retried > 0, "no request met a killed process: the test proved nothing"
    assert outcome.failures == []
    assert not [answer for answer in outcome.answers if answer[1] >= 500], outcome.answers
    await _check_database(deployment, shop, outcome)


async def _check_database(deployment: Deployment, shop: Shop, outcome: Outcome) -> None:
    engine = make_engine(deployment.database_url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        async with engine.connect() as conn:
            assert await ledger_violations(conn) == []
            v = {"v": shop.vendor_id}
            transactions: dict[str, int] = dict(
                (
                    await conn.execute(
                        text("SELECT idempotency_key, count(*) FROM transactions WHERE vendor_id = :v GROUP BY 1"), v
                    )
                )
                .tuples()
                .all()
            )
            adjustments: dict[str, int] = dict(
                (
                    await conn.execute(
                        text(
                            "SELECT idempotency_key, count(*) FROM ledger_entries"
                            " WHERE vendor_id = :v AND type = 'adjust' AND idempotency_key IS NOT NULL GROUP BY 1"
                        ),
                        v,
                    )
                )
                .tuples()
                .all()
            )
            redemptions: dict[str, str] = dict(
                (await conn.execute(text("SELECT idempotency_key, status FROM redemptions WHERE vendor_id = :v"), v))
                .tuples()
                .all()
            )
            redeem_entries = await conn.scalar(
                text("SELECT count(*) FROM ledger_entries WHERE vendor_id = :v AND type = 'redeem'"), v
            )
            emails = collections.Counter(
                (
                    await conn.scalars(
                        text("SELECT lower(email) FROM customers WHERE vendor_id = :v AND email LIKE 'k1-%'"), v
                    )
                ).all()
            )
            used = set(
                (
                    await conn.scalars(
                        text("SELECT confirmation_code FROM redemptions WHERE vendor_id = :v AND status = 'used'"), v
                    )
                ).all()
            )
    finally:
        await engine.dispose()

    def split(finals: dict[str, int]) -> tuple[set[str], set[str]]:
        return {k for k, s in finals.items() if 200 <= s < 300}, {k for k, s in finals.items() if 400 <= s < 500}

    accepted, refused = split(outcome.transactions)
    assert accepted
    assert all(transactions.get(k) == 1 for k in accepted)
    assert not refused & set(transactions)
    accepted, refused = split(outcome.adjustments)
    assert accepted
    assert all(adjustments.get(k) == 1 for k in accepted)
    assert not refused & set(adjustments)
    accepted, refused = split(outcome.redemptions)
    assert accepted
    assert accepted <= set(redemptions)
    assert not refused & set(redemptions)
    assert redeem_entries == len(redemptions)  # one deduction per redemption, none orphaned
    assert set(outcome.codes_verified) <= used
    assert outcome.emails_registered
    assert all(emails[e] == 1 for e in outcome.emails_registered)
    # nothing the clients did not ask for: every keyed row in the database was answered to a client
    assert set(transactions) <= set(outcome.transactions)
    assert set(adjustments) - {k for k in adjustments if k.startswith("start-")} <= set(outcome.adjustments)
