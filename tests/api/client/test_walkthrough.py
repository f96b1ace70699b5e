"""docs/client.md's till walkthrough, its code blocks run as written with the blocking client
against ``loyalty serve`` in its own process (CLIENT-7)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.served import Served
from tests.support.service import ADMIN

DOC = Path(__file__).resolve().parents[3] / "docs" / "client.md"


@pytest.fixture(scope="module")
def served(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with Served(database_url, Path(tmp_path_factory.mktemp("client-served"))) as served:
        yield served


def admin(served: Served, path: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = httpx.post(f"{served.url}/admin/v1{path}", json=body, headers=ADMIN, timeout=10)
    assert answer.status_code == 201, answer.text
    made: dict[str, Any] = answer.json()["data"]
    return made


def shop(served: Served) -> dict[str, str]:
    """What the walkthrough takes as set up in the portal: an earn rule of a point per euro, a reward
    of 20 points, and the till's credentials."""
    plan = admin(served, "/plans", {"name": "walkthrough"})
    vendor = admin(served, "/vendors", {"name": "Walkthrough shop", "plan_id": plan["id"]})
    base = f"/vendors/{vendor['id']}"
    admin(served, f"{base}/earn-rules", {"name": "Euro", "points_per_unit": 1, "unit_amount": 100})
    admin(served, f"{base}/rewards", {"type": "free_product", "name": "Coffee", "point_cost": 20})
    till = admin(served, f"{base}/clients", {"name": "till 1"})
    return {"BASE_URL": served.url, "CLIENT_ID": till["client_id"], "CLIENT_SECRET": till["client_secret"]}


def test_the_walkthrough_runs_as_written(served: Served) -> None:
    """CLIENT-7: register, look up by card, purchase, affordable rewards, redeem, verify, return."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) == 7
    scope: dict[str, Any] = shop(served)
    for number, block in enumerate(blocks, 1):
        exec(compile(block, f"docs/client.md block {number}", "exec"), scope)

    assert scope["found"].id == scope["customer"].id
    assert scope["card"] is not None
    assert scope["unknown"] == (404, "CUSTOMER_NOT_FOUND")
    assert scope["earned"] == 25
    assert len(scope["purchase"].idempotency_key) == 36
    assert [(r.name, r.point_cost) for r in scope["affordable"]] == [("Coffee", 20)]
    assert scope["redemption"].points_deducted == 20
    assert scope["verified"].used_at is not None
    assert scope["refused"] == "INSUFFICIENT_BALANCE"
    assert scope["returned"].points_reversed == 5
    assert scope["balance"] == 0
