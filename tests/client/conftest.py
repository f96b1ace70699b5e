"""The client's own logic against a scripted service (httpx.MockTransport): no server, no
database. What the real service answers is checked by tests/api/client."""

from __future__ import annotations

import pytest

from tests.support.scripted_service import Scripted


@pytest.fixture
def service() -> Scripted:
    return Scripted()
