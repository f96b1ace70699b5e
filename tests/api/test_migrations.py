"""STYLE.md: Alembic `upgrade head` runs, and autogenerate finds no diff, so models and migrations cannot drift."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine

from loyalty_api import migrate
from loyalty_api.cli import main
from loyalty_api.migrate import include_object
from loyalty_core.models import metadata


def test_models_and_migrations_do_not_drift(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True, "include_object": include_object})
            diff = compare_metadata(context, metadata)
    finally:
        engine.dispose()
    assert diff == []


def test_upgrade_is_repeatable(database_url: str) -> None:
    migrate.upgrade(database_url)
    migrate.upgrade(database_url)


def test_db_upgrade_verb_uses_database_url(database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url)
    assert main(["db", "upgrade"]) == 0
