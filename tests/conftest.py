"""Shared by every package's tests. Imports nothing beyond pytest: ``tests/wallet_pass`` runs in an
environment that holds neither SQLAlchemy nor the other packages."""

import sys

import pytest


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Drop the databases this run created and its Redis keys (tests/support/database.py), if it
    made any: a run leaves nothing behind on the servers it shares, and touches nothing it did not make."""
    database = sys.modules.get("tests.support.database")
    if database is not None:
        database.drop_created()
        database.delete_run_redis_keys()
