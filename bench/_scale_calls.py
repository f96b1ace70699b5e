"""The requests ``bench scale`` times on a vendor: the till, the admin and portal reads, the events
feed, ``/metrics`` and the health check, each sent one after another through the served clone.

Every call is one function of a ``Shop`` (the vendor's token, a customer of a typical ledger, the
customer with the most entries, a portal session) and a request number, answering the path it
asked; any status but the expected one stops the bench, so a figure is never that of an error.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx

from bench._servers import ADMIN

PASSWORD = "a long enough password for the bench"


@dataclass
class Shop:
    label: str
    vendor_id: int
    headers: dict[str, str]
    customer_id: int
    card: str
    email: str
    external_id: str
    name_part: str
    last_name: str
    heavy_id: int
    portal: httpx.Client
    run: str
    codes: list[str] = field(default_factory=list)
    purchases: list[int] = field(default_factory=list)


def _check(response: httpx.Response, *expected: int) -> httpx.Response:
    if response.status_code not in (expected or (200,)):
        raise RuntimeError(
            f"{response.request.method} {response.request.url}: {response.status_code} {response.text[:500]}"
        )
    return response


def open_shop(client: httpx.Client, base: str, label: str, vendor_id: int, db: Any, run: str) -> Shop:
    """A client and a portal owner for the vendor (through the admin API), signed in; its customers
    read from the clone: the first (the heavy one on the large vendor) and a typical one."""
    pair = _check(
        client.post(
            f"/admin/v1/vendors/{vendor_id}/clients",
            json={"name": "scale", "scopes": ["read", "write", "webhooks"]},
            headers=ADMIN,
        ),
        201,
    )
    grant = {"grant_type": "client_credentials", **{k: pair.json()["data"][k] for k in ("client_id", "client_secret")}}
    token = _check(client.post("/oauth/token", json=grant)).json()["access_token"]
    email = f"owner.{run}.{vendor_id}@scale.example"
    body = {"email": email, "role": "owner", "password": PASSWORD}
    _check(client.post(f"/admin/v1/vendors/{vendor_id}/users", json=body, headers=ADMIN), 201)
    portal = httpx.Client(base_url=base, timeout=600)
    form = _check(portal.get("/portal/login"))
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', form.text)
    assert csrf is not None
    _check(portal.post("/portal/login", data={"email": email, "password": PASSWORD, "csrf_token": csrf.group(1)}), 303)
    heavy, typical = db.execute(
        "SELECT min(id), min(id) + 7 FROM customers WHERE vendor_id = %s", (vendor_id,)
    ).fetchone()
    row = db.execute(
        "SELECT c.email, c.external_id, c.last_name, i.value FROM customers c JOIN customer_identifiers i"
        " ON i.vendor_id = c.vendor_id AND i.customer_id = c.id WHERE c.vendor_id = %s AND c.id = %s",
        (vendor_id, typical),
    ).fetchone()
    email_of, external_id, last_name, card = row
    return Shop(
        label, vendor_id, {"Authorization": f"Bearer {token}"}, typical, card, email_of, external_id,
        last_name[:3].lower(), last_name, heavy, portal, run,
    )  # fmt: skip


Call = Callable[[httpx.Client, Shop, int], str]


def lookup(c: httpx.Client, s: Shop, n: int) -> str:
    _check(c.get("/api/v1/customers/lookup", params={"identifier": s.card}, headers=s.headers))
    return "GET /api/v1/customers/lookup?identifier="


def purchase(c: httpx.Client, s: Shop, n: int) -> str:
    body = {
        "identifier": s.card,
        "total_amount": 50_000,
        "idempotency_key": f"scale-p-{s.run}-{n}",
        "items": [{"name": "Coffee", "sku": "SKU-1", "quantity": 1, "unit_price": 50_000}],
    }
    s.purchases.append(
        int(_check(c.post("/api/v1/transactions", json=body, headers=s.headers), 201).json()["data"]["id"])
    )
    return "POST /api/v1/transactions"


def redemption(c: httpx.Client, s: Shop, n: int) -> str:
    body = {"identifier": s.card, "reward_id": s.vendor_id, "idempotency_key": f"scale-r-{s.run}-{n}"}
    made = _check(c.post("/api/v1/redemptions", json=body, headers=s.headers), 201).json()["data"]
    s.codes.append(str(made["confirmation_code"]))
    return "POST /api/v1/redemptions"


def verify(c: httpx.Client, s: Shop, n: int) -> str:
    _check(c.post(f"/api/v1/redemptions/{s.codes[n % len(s.codes)]}/verify", headers=s.headers))
    return "POST /api/v1/redemptions/{code}/verify"


def adjust(c: httpx.Client, s: Shop, n: int) -> str:
    body = {"amount": 5, "reason": "scale", "idempotency_key": f"scale-a-{s.run}-{n}"}
    _check(c.post(f"/api/v1/customers/{s.customer_id}/wallet/adjust", json=body, headers=s.headers), 200, 201)
    return "POST /api/v1/customers/{id}/wallet/adjust"


def give_back(c: httpx.Client, s: Shop, n: int) -> str:
    body = {"amount": 100, "idempotency_key": f"scale-ret-{s.run}-{n}"}
    transaction = s.purchases[n % len(s.purchases)]
    _check(c.post(f"/api/v1/transactions/{transaction}/returns", json=body, headers=s.headers), 201)
    return "POST /api/v1/transactions/{id}/returns"


def wallet(c: httpx.Client, s: Shop, n: int) -> str:
    _check(c.get(f"/api/v1/customers/{s.customer_id}/wallet", headers=s.headers))
    return "GET /api/v1/customers/{id}/wallet"


def ledger_first(c: httpx.Client, s: Shop, n: int) -> str:
    _check(c.get(f"/api/v1/customers/{s.heavy_id}/ledger", params={"per_page": 5}, headers=s.headers))
    return "GET .../ledger?per_page=5 (page 1, the customer with the most entries)"


def ledger_deep(c: httpx.Client, s: Shop, n: int) -> str:
    _check(c.get(f"/api/v1/customers/{s.heavy_id}/ledger", params={"per_page": 5, "page": 1000}, headers=s.headers))
    return "GET .../ledger?per_page=5&page=1000 (same customer)"


def transactions(c: httpx.Client, s: Shop, n: int) -> str:
    _check(c.get(f"/api/v1/customers/{s.customer_id}/transactions", headers=s.headers))
    return "GET /api/v1/customers/{id}/transactions"


TILL: list[Call] = [
    lookup, purchase, redemption, verify, adjust, give_back, wallet, ledger_first, ledger_deep, transactions,
]  # fmt: skip


def _admin_search(q: Callable[[Shop], str], what: str) -> Call:
    def call(c: httpx.Client, s: Shop, n: int) -> str:
        _check(c.get(f"/admin/v1/vendors/{s.vendor_id}/customers", params={"q": q(s)}, headers=ADMIN))
        return f"GET /admin/v1/vendors/{{id}}/customers?q= ({what})"

    return call


def admin_last_page(c: httpx.Client, s: Shop, n: int) -> str:
    first = _check(c.get(f"/admin/v1/vendors/{s.vendor_id}/customers", params={"per_page": 100}, headers=ADMIN))
    meta = first.json()["data"]["meta"]
    last = max(1, int(meta.get("last_page") or 1))
    _check(c.get(f"/admin/v1/vendors/{s.vendor_id}/customers", params={"per_page": 100, "page": last}, headers=ADMIN))
    return "GET /admin/v1/vendors/{id}/customers page 1 then the last page (two requests)"


def admin_first_page(c: httpx.Client, s: Shop, n: int) -> str:
    _check(c.get(f"/admin/v1/vendors/{s.vendor_id}/customers", params={"per_page": 100}, headers=ADMIN))
    return "GET /admin/v1/vendors/{id}/customers (page 1)"


def liability(c: httpx.Client, s: Shop, n: int) -> str:
    """The twelve months to now from the monthly totals, the tail and the lots ended unexpired."""
    _check(c.get(f"/admin/v1/vendors/{s.vendor_id}/liability", headers=ADMIN))
    return "GET /admin/v1/vendors/{id}/liability (12 months)"


def liability_longest(c: httpx.Client, s: Shop, n: int) -> str:
    _check(c.get(f"/admin/v1/vendors/{s.vendor_id}/liability", params={"from": _months_back(35)}, headers=ADMIN))
    return "GET /admin/v1/vendors/{id}/liability (36 months)"


def _months_back(count: int) -> str:
    today = datetime.now(UTC)
    index = today.year * 12 + today.month - 1 - count
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


ADMIN_READS: list[Call] = [
    _admin_search(lambda s: s.card, "card"),
    _admin_search(lambda s: s.email, "email"),
    _admin_search(lambda s: s.external_id, "external id"),
    _admin_search(lambda s: s.last_name, "a whole last name"),
    _admin_search(lambda s: s.name_part, "part of a name, 3 letters"),
    admin_first_page,
    admin_last_page,
    liability,
    liability_longest,
]


def _portal(path: Callable[[Shop], str], what: str) -> Call:
    def call(c: httpx.Client, s: Shop, n: int) -> str:
        _check(s.portal.get(path(s)))
        return f"GET {what}"

    return call


PORTAL: list[Call] = [
    _portal(lambda s: "/portal", "/portal (dashboard)"),
    _portal(lambda s: f"/portal/customers?q={s.last_name}", "/portal/customers?q= (a last name)"),
    _portal(lambda s: f"/portal/customers?q={s.name_part}", "/portal/customers?q= (3 letters of a name)"),
    _portal(lambda s: f"/portal/customers/{s.heavy_id}", "/portal/customers/{id} (the customer with the most entries)"),
    _portal(lambda s: "/portal/redemptions", "/portal/redemptions"),
]


def events_page(page: int) -> Call:
    def call(c: httpx.Client, s: Shop, n: int) -> str:
        _check(c.get("/api/v1/events", params={"per_page": 100, "page": page}, headers=s.headers))
        return f"GET /api/v1/events?per_page=100&page={page:,}"

    return call


def metrics(c: httpx.Client, s: Shop, n: int) -> str:
    _check(c.get("/metrics", headers=ADMIN))
    return "GET /metrics"


def ready(c: httpx.Client, s: Shop, n: int) -> str:
    _check(c.get("/health/ready"))
    return "GET /health/ready"


def timed(call: Call, client: httpx.Client, shop: Shop, requests: int, warm_up: int = 5) -> tuple[str, list[float]]:
    """``requests`` calls one after another after ``warm_up``; answers the label and the latencies (ms)."""
    label = ""
    samples: list[float] = []
    for n in range(warm_up + requests):
        began = time.perf_counter()
        label = call(client, shop, n)
        if n >= warm_up:
            samples.append((time.perf_counter() - began) * 1000)
    return label, samples


def export(shop: Shop) -> tuple[float, float, int, int]:
    """The portal's customer export streamed to its end: first byte (ms), whole (s), bytes, rows."""
    began = time.perf_counter()
    first = 0.0
    size = rows = 0
    with shop.portal.stream("GET", "/portal/export/customers.csv") as response:
        _check(response)
        for chunk in response.iter_bytes():
            if not first:
                first = (time.perf_counter() - began) * 1000
            size += len(chunk)
            rows += chunk.count(b"\n")
    return first, time.perf_counter() - began, size, rows - 1
