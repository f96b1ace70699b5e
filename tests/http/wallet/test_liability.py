"""GET /admin/v1/vendors/{vendor_id}/liability: the month range and its refusals, the figures in
points and cents, breakage, and the vendor's point value (LIABILITY-1, LIABILITY-5, LIABILITY-6)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SettableClock
from tests.support.app import ADMIN
from tests.support.envelope import error_of
from tests.support.tenants import make_tenant
from tests.support.wallets import earn, new_customer

NOW = datetime(2031, 7, 15, 12, 0, tzinfo=UTC)


def path(vendor_id: int) -> str:
    return f"/admin/v1/vendors/{vendor_id}/liability"


async def report(client: AsyncTestClient[Litestar], vendor_id: int, **query: str) -> dict[str, Any]:
    answer = await client.get(path(vendor_id), params=query, headers=ADMIN)
    assert answer.status_code == 200, answer.text
    data: dict[str, Any] = answer.json()["data"]
    return data


async def test_the_report_defaults_to_the_twelve_months_up_to_now_with_cents_and_breakage(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, test_clock: SettableClock
) -> None:
    """LIABILITY-1, LIABILITY-5, LIABILITY-6: every month listed, figures in points and cents (toward zero), breakage
    half up; 30 points ending in June count there though no entry expired them yet."""
    tenant = await make_tenant(client, vendor={"point_value_millicents": 333})
    customer = await new_customer(engine, tenant.vendor_id)
    await earn(engine, tenant.vendor_id, customer, 30, at=datetime(2031, 5, 20, tzinfo=UTC), days=30)
    await earn(engine, tenant.vendor_id, customer, 7, at=datetime(2031, 7, 1, tzinfo=UTC))
    test_clock.freeze(NOW)
    data = await report(client, tenant.vendor_id)
    months = data["months"]
    assert [m["month"] for m in months] == [f"2030-{n:02d}" for n in range(8, 13)] + [
        f"2031-{n:02d}" for n in range(1, 8)
    ]
    may, june, july = months[-3:]
    assert (may["opening"], may["earn"], may["closing"]) == (0, 30, 30)
    assert (june["expire"], june["closing"], june["expire_cents"]) == (-30, 0, -9)
    assert (july["earn"], july["closing"], july["closing_cents"], july["pending_closing"]) == (7, 7, 2, 0)
    assert list(may) == [
        "month",
        "opening",
        "earn",
        "redeem",
        "expire",
        "adjust",
        "return",
        "referral",
        "closing",
        "pending_closing",
        *(
            f"{c}_cents"
            for c in (
                "opening",
                "earn",
                "redeem",
                "expire",
                "adjust",
                "return",
                "referral",
                "closing",
                "pending_closing",
            )
        ),
    ]
    assert data["point_value_millicents"] == 333
    assert data["breakage_percent"] == 81.08
    only_june = await report(client, tenant.vendor_id, **{"from": "2031-06", "to": "2031-06"})
    assert [(m["month"], m["opening"], m["closing"]) for m in only_june["months"]] == [("2031-06", 30, 0)]
    assert only_june["breakage_percent"] is None


async def test_the_range_is_refused_on_its_parameter(
    client: AsyncTestClient[Litestar], test_clock: SettableClock
) -> None:
    """LIABILITY-1: a value that is no month on itself; a later `to`, a `from` after it and more than 36
    months on `to`; 36 months answer."""
    tenant = await make_tenant(client)
    test_clock.freeze(NOW)
    refusals = [
        ({"from": "2031-13"}, "from"),
        ({"from": "31-01"}, "from"),
        ({"to": "2031/07"}, "to"),
        ({"to": "0000-01"}, "to"),
        ({"to": "2031-08"}, "to"),
        ({"from": "2031-07", "to": "2031-06"}, "to"),
        ({"from": "2028-07", "to": "2031-07"}, "to"),
    ]
    for query, field in refusals:
        answer = await client.get(path(tenant.vendor_id), params=query, headers=ADMIN)
        assert answer.status_code == 422, (query, answer.text)
        error = error_of(answer)
        assert error["code"] == "VALIDATION_ERROR"
        assert list(error["details"]) == [field], query
    longest = await report(client, tenant.vendor_id, **{"from": "2028-08", "to": "2031-07"})
    assert len(longest["months"]) == 36
    earlier = await report(client, tenant.vendor_id, to="2030-02")
    assert (earlier["months"][0]["month"], earlier["months"][-1]["month"]) == ("2029-03", "2030-02")
    missing = await client.get(path(999_999_999), headers=ADMIN)
    assert missing.status_code == 404


async def test_the_point_value_is_a_vendor_setting(client: AsyncTestClient[Litestar]) -> None:
    """LIABILITY-5: 0 by default, 0 to 1,000,000 on create and PATCH, null refused."""
    tenant = await make_tenant(client)
    vendor = f"/admin/v1/vendors/{tenant.vendor_id}"
    read = await client.get(vendor, headers=ADMIN)
    assert read.json()["data"]["point_value_millicents"] == 0
    for refused in (None, -1, 1_000_001, 1.5):
        answer = await client.patch(vendor, json={"point_value_millicents": refused}, headers=ADMIN)
        assert answer.status_code == 422, refused
        assert list(error_of(answer)["details"]) == ["point_value_millicents"]
    changed = await client.patch(vendor, json={"point_value_millicents": 1_000_000}, headers=ADMIN)
    assert changed.json()["data"]["point_value_millicents"] == 1_000_000
    assert (await report(client, tenant.vendor_id))["point_value_millicents"] == 1_000_000
