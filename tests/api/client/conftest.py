"""The composed service as the client's contract suite reaches it: the admin token of
tests/support/app.py (the tenants helpers use it) and no worker in the test process."""

from __future__ import annotations

from collections.abc import AsyncIterator

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from loyalty_api.app import create_app
from loyalty_api.settings import Settings
from tests.support.app import ADMIN_TOKEN


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[AsyncTestClient[Litestar]]:
    own = msgspec.structs.replace(settings, admin_token=ADMIN_TOKEN, worker="external")
    async with AsyncTestClient(app=create_app(own)) as made:
        yield made
