"""Fixtures of the composed service's suite: a migrated database, settings, client, ledger check."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from loyalty_api.app import create_app
from loyalty_api.settings import Settings
from tests.support.database import database_name, migrated_database
from tests.support.service import ADMIN_TOKEN


@pytest.fixture(scope="session")
def database_url() -> str:
    return migrated_database(database_name("api"))


@pytest.fixture(scope="session")
def settings(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings(
        database_url=database_url,
        admin_token=ADMIN_TOKEN,
        jwt_secret="api-test-jwt-secret-of-32-bytes-or-more",
        encryption_key="api-test-encryption-key-of-32-bytes-or-more",
        test_mode=True,
        home=Path(tmp_path_factory.mktemp("home")),
    )


@pytest.fixture(scope="module", autouse=True)
async def ledger_holds_after_module(database_url: str) -> AsyncIterator[None]:
    """The ledger invariant and the till rows' keys (tests/support/invariants.py) after every test module."""
    yield
    from loyalty_core.db import make_engine
    from tests.support.invariants import dangling_keys, ledger_violations

    engine = make_engine(database_url)
    try:
        async with engine.connect() as conn:
            assert await ledger_violations(conn) == []
            assert await dangling_keys(conn) == []
    finally:
        await engine.dispose()


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[AsyncTestClient[Litestar]]:
    async with AsyncTestClient(app=create_app(settings)) as client:
        yield client
