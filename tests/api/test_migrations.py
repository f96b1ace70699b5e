"""Alembic `upgrade head` runs, and autogenerate finds no diff, so models and migrations cannot drift."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, text

from loyalty_api import migrate
from loyalty_api.cli import main
from loyalty_api.migrate import include_object
from loyalty_core.models import metadata
from tests.support.database import database_name, fresh_database


def test_models_and_migrations_do_not_drift(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True, "include_object": include_object})
            diff = compare_metadata(context, metadata)
    finally:
        engine.dispose()
    assert diff == []


def _state(database_url: str) -> tuple[list[str], list[str]]:
    """The recorded revisions and every table of the public schema."""
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            versions = list(conn.scalars(text(f"SELECT version_num FROM {migrate.VERSION_TABLE}")))
            tables = list(
                conn.scalars(
                    text("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1")
                )
            )
    finally:
        engine.dispose()
    return versions, tables


def test_a_second_upgrade_stays_at_the_one_head(database_url: str) -> None:
    """``db upgrade`` on an up-to-date database records exactly the scripts' head and changes no table."""
    [head] = ScriptDirectory(str(migrate.MIGRATIONS)).get_heads()
    before = _state(database_url)
    migrate.upgrade(database_url)
    migrate.upgrade(database_url)
    after = _state(database_url)
    assert after == before
    assert after[0] == [head]
    assert {"vendors", "customers", "wallets", "ledger_entries"} <= set(after[1])


def test_db_upgrade_verb_uses_database_url(database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url)
    assert main(["db", "upgrade"]) == 0


def test_the_newest_migrations_go_down_and_up_again() -> None:
    """The last two revisions (vendor keys, redemptions index) downgrade cleanly on a migrated
    database, and upgrading again leaves the models and the database without a diff."""
    url = fresh_database(database_name("api_downgrade"))
    migrate.upgrade(url)
    alembic = migrate.commands(url)
    try:
        alembic.downgrade(revision="-2")
        alembic.upgrade(revision="head")
    finally:
        alembic.sqlalchemy_config.get_engine().dispose()
    test_models_and_migrations_do_not_drift(url)


def test_upgrades_started_together_run_one_after_the_other() -> None:
    """The scale-out shape starts several `loyalty serve` processes at once, each migrating first:
    they take turns on an advisory lock, so a fresh database ends at the one head, without errors."""
    url = fresh_database(database_name("api_together"))
    with ThreadPoolExecutor(max_workers=3) as pool:
        for done in [pool.submit(migrate.upgrade, url) for _ in range(3)]:
            done.result(timeout=120)
    [head] = ScriptDirectory(str(migrate.MIGRATIONS)).get_heads()
    assert _state(url)[0] == [head]
    test_models_and_migrations_do_not_drift(url)
