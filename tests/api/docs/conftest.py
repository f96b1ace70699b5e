"""The docs pages' suite: a served instance (granian, as ``loyalty serve`` runs) and a real browser."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.browser import browser, chromium, context, page, pytest_runtest_makereport
from tests.support.served import Served

__all__ = ["browser", "chromium", "context", "page", "pytest_runtest_makereport"]


@pytest.fixture(scope="module")
def served(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = Path(tmp_path_factory.mktemp("served"))
    # the browser's page loads count against the allowance of requests without a token
    with Served(database_url, home, {"LOYALTY_ANON_RATE_PER_MINUTE": "100000"}) as served:
        yield served
