"""Fixtures of the portal's suite: the composed service over a migrated database (the portal is
mounted by it), a client per test, and a second app instance over the same database."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_api.app import create_app
from loyalty_api.settings import Settings
from loyalty_core.db import make_engine
from tests.support.app import ADMIN_TOKEN
from tests.support.browser import browser, chromium, context, page, pytest_runtest_makereport  # noqa: F401  (fixtures and hook)
from tests.support.database import database_name, migrated_database
from tests.support.live import Live, served


@pytest.fixture(scope="session")
def database_url() -> str:
    return migrated_database(database_name("portal"))


@pytest.fixture(scope="session")
def settings(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings(
        database_url=database_url,
        admin_token=ADMIN_TOKEN,
        jwt_secret="portal-test-jwt-secret-of-32-bytes-or-more",
        encryption_key="portal-test-encryption-key-of-32-bytes-or-more",
        test_mode=True,
        worker="external",
        home=Path(tmp_path_factory.mktemp("home")),
    )


@pytest.fixture(scope="session")
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = make_engine(database_url)
    yield engine
    await engine.dispose()


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[AsyncTestClient[Litestar]]:
    async with AsyncTestClient(app=create_app(settings)) as client:
        client.follow_redirects = False  # the tests read where each answer sends the browser
        yield client
        await client.delete("/admin/v1/test-clock", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})


@pytest.fixture
async def other_client(settings: Settings) -> AsyncIterator[AsyncTestClient[Litestar]]:
    """A second instance of the service (another process in production) over the same database."""
    async with AsyncTestClient(app=create_app(settings)) as client:
        client.follow_redirects = False  # the tests read where each answer sends the browser
        yield client
        await client.delete("/admin/v1/test-clock", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})


@pytest.fixture(scope="session")
def live(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """The service served on a free port, for the browser."""
    with served(database_url, tmp_path_factory.mktemp("live-home")) as running:
        yield running
