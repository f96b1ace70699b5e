"""The typed client (packages/loyalty_client) against the composed service of the test: it shares
the test's ``AsyncTestClient`` (an httpx client over the app), and records every operation it
calls so a suite can show that it called them all."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient

from loyalty_client import AsyncLoyaltyClient
from loyalty_client.operation import Operation, PathValues, QueryValues, RequestBody
from tests.support.tenants import Tenant


class Recording(AsyncLoyaltyClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.called: set[str] = set()
        self.calls: list[tuple[str, dict[str, object]]] = []

    async def _call(self, op: Operation, path: PathValues, query: QueryValues, body: RequestBody) -> Any:
        self.called.add(op.op_id)
        self.calls.append((op.op_id, {name: value for name, value in query.items() if value is not None}))
        return await super()._call(op, path, query, body)


def connect(client: AsyncTestClient[Litestar], tenant: Tenant) -> Recording:
    """The client with the tenant's credentials: it fetches its own token."""
    return Recording(str(client.base_url), tenant.client_id, tenant.client_secret, http_client=client)
