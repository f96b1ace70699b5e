"""The client's token against the real service: when the service's clock has passed the token's
end before the client's, the 401 gets one fresh token and the call answers (CLIENT-2)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.loyalty_client import connect
from tests.support.tenants import admin, make_tenant


async def test_a_token_the_service_finds_expired_is_renewed_once(client: AsyncTestClient[Litestar]) -> None:
    """CLIENT-2"""
    loyalty = connect(client, await make_tenant(client))
    assert (await loyalty.list_products()).meta.total == 0
    later = (datetime.now(UTC) + timedelta(days=2)).isoformat()
    await admin(client, "PUT", "/admin/v1/test-clock", {"now": later})
    try:
        assert (await loyalty.list_products()).meta.total == 0
    finally:
        await admin(client, "DELETE", "/admin/v1/test-clock")
    # each list call is recorded once, before the token it fetches: the second fetched a fresh one
    assert [op for op, _ in loyalty.calls] == ["listProducts", "issueToken", "listProducts", "issueToken"]
