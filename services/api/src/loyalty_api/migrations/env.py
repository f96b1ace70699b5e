"""Alembic environment: the domain's metadata, run on a synchronous psycopg connection."""

from __future__ import annotations

from typing import Any, cast

from alembic import context

from loyalty_api.migrate import include_object
from loyalty_core.models import metadata

config = cast("Any", context.config)


def run_migrations_online() -> None:
    engine = config.engine
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=metadata,
            compare_type=True,
            version_table=config.version_table_name,
            render_as_batch=False,
            user_module_prefix="advanced_alchemy.types.",
            include_object=include_object,
            # each migration commits and lets its locks go before the next one starts (MIGRATE-1)
            transaction_per_migration=True,
        )
        with context.begin_transaction():
            context.run_migrations()


def run_migrations_offline() -> None:
    context.configure(
        url=config.db_url, target_metadata=metadata, literal_binds=True, version_table=config.version_table_name
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
