"""The admin list of suppressed addresses, global across shops, newest first, filter ``email``."""

from __future__ import annotations

import uuid

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.app import ADMIN
from tests.support.tenants import admin


async def test_suppressions_are_listed_and_found_by_address(client: AsyncTestClient[Litestar]) -> None:
    tag = uuid.uuid4().hex[:8]
    bounced = await admin(
        client, "POST", "/admin/v1/email-suppressions", {"email": f"B-{tag}@example.com", "reason": "bounce"}
    )
    spam = await admin(
        client, "POST", "/admin/v1/email-suppressions", {"email": f"s-{tag}@example.com", "reason": "spam"}
    )
    assert bounced["email"] == f"b-{tag}@example.com"

    newest = await client.get("/admin/v1/email-suppressions", params={"per_page": 2}, headers=ADMIN)
    assert newest.status_code == 200
    assert newest.json()["data"]["data"] == [spam, bounced]
    found = await client.get("/admin/v1/email-suppressions", params={"email": f"B-{tag}@EXAMPLE.com"}, headers=ADMIN)
    assert found.json()["data"]["data"] == [bounced]
    assert found.json()["data"]["meta"]["total"] == 1
