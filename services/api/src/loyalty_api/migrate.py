"""Schema migrations through Advanced Alchemy's Alembic commands."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from advanced_alchemy.alembic.commands import AlembicCommands
from advanced_alchemy.config import AlembicSyncConfig, EngineConfig, SQLAlchemySyncConfig
from psycopg.errors import LockNotAvailable
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

if TYPE_CHECKING:
    from sqlalchemy import Engine

MIGRATIONS = Path(__file__).parent / "migrations"
VERSION_TABLE = "alembic_versions"
FOREIGN_TABLE_PREFIXES = ("saq_",)
"""Tables other software keeps in the same database (SAQ's queue on PostgreSQL)."""


OPTIONAL_INDEXES = frozenset({"ix_customers_folded_name"})
"""Indexes made only where the server has what they need (the name's trigrams need ``pg_trgm``,
which the embedded PostgreSQL lacks): the migrations and the models' schema make them when they can,
so autogenerate leaves them out of its comparison."""


def include_object(obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any) -> bool:
    """Autogenerate looks only at our own tables (not Alembic's version table, not SAQ's queue) and
    not at the optional indexes."""
    if type_ == "index" and name in OPTIONAL_INDEXES:
        return False
    if type_ == "table" and reflected and compare_to is None:
        return name != VERSION_TABLE and not (name or "").startswith(FOREIGN_TABLE_PREFIXES)
    return True


LOCK_TIMEOUT = "1s"
"""The longest a migration's statement waits for a lock (MIGRATE-1). A statement waiting for a lock
makes every later request for a conflicting one queue behind it, the till's included: so a step
that cannot have its lock soon gives up, its migration rolls back, and ``upgrade`` tries again."""
LOCK_ATTEMPTS = 60
"""Tries of a migration whose lock stayed busy; a pause of a second between them."""


def commands(database_url: str) -> AlembicCommands:
    config = SQLAlchemySyncConfig(
        connection_string=database_url,
        engine_config=EngineConfig(connect_args={"options": f"-c lock_timeout={LOCK_TIMEOUT}"}),
        alembic_config=AlembicSyncConfig(
            script_location=str(MIGRATIONS),
            version_table_name=VERSION_TABLE,
            template_path=str(MIGRATIONS),
        ),
    )
    return AlembicCommands(sqlalchemy_config=config)


MIGRATION_LOCK = 0x6C6F7961
"""The advisory lock key upgrades take: several ``loyalty serve`` processes started together (the
scale-out shape) migrate one after the other, and the later ones find the schema at head."""


LOCK_POLL_SECONDS = 0.2
"""How often an upgrade waiting for another one asks for the lock again."""


def upgrade(database_url: str, revision: str = "head") -> None:
    alembic = commands(database_url)
    engine = cast("Engine", alembic.sqlalchemy_config.get_engine())  # a sync config makes a sync engine
    try:
        # The lock is the session's, held and waited for outside any transaction: a migration's CREATE
        # INDEX CONCURRENTLY waits for every transaction open when it starts, so an open one here, or
        # another process's statement blocked in pg_advisory_lock, would stall it for ever. A waiting
        # process asks again every moment instead, holding no snapshot in between.
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as guard:
            while not guard.execute(text("SELECT pg_try_advisory_lock(:key)"), {"key": MIGRATION_LOCK}).scalar_one():
                time.sleep(LOCK_POLL_SECONDS)
            try:
                _upgrade_retrying(alembic, revision)
            finally:
                guard.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK})
    finally:
        engine.dispose()


def _upgrade_retrying(alembic: AlembicCommands, revision: str) -> None:
    """Each migration commits on its own (``migrations/env.py``), so a try resumes at the one whose
    lock was busy; the ones before it stay done (MIGRATE-1)."""
    for attempt in range(1, LOCK_ATTEMPTS + 1):
        try:
            alembic.upgrade(revision=revision)
            return
        except OperationalError as exc:
            if not isinstance(exc.orig, LockNotAvailable) or attempt == LOCK_ATTEMPTS:
                raise
            print(
                f"loyalty: a migration's lock stayed busy for {LOCK_TIMEOUT}; trying again ({attempt})",
                file=sys.stderr,
                flush=True,
            )
            time.sleep(1)


def behind(stored: set[str]) -> str | None:
    """The revisions a database must reach for this release, or None when it holds them: the
    newest this release knows, or newer ones it does not (a later release migrated the database,
    and a rolling upgrade still runs this one on it)."""
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    script = ScriptDirectory(str(MIGRATIONS))
    heads = set(script.get_heads())
    if stored == heads:
        return None
    for revision_id in stored:
        try:
            script.get_revision(revision_id)
        except CommandError:  # unknown here: written by a later release
            return None
    return ", ".join(sorted(heads))


def revision(database_url: str, message: str) -> None:
    """Autogenerate a migration from the models (developers only: ``just db-revision``)."""
    alembic = commands(database_url)
    # files named like 2025-01-31-1200_add_wallets.py, so they sort by date
    alembic.config.set_main_option(
        "file_template", "%%(year)d-%%(month).2d-%%(day).2d-%%(hour).2d%%(minute).2d_%%(slug)s"
    )
    alembic.config.set_main_option("timezone", "UTC")
    alembic.revision(message=message, autogenerate=True)
