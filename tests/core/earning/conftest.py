"""The till the purchase's tests submit through: one process with two connections of its own."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.tills import Till, running_till


@pytest.fixture
async def till(engine: AsyncEngine) -> AsyncIterator[Till]:
    async with running_till(engine) as running:
        yield running
