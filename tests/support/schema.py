"""Schema set-up for the suites that do not run migrations (core, http)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.models import metadata


async def create_schema(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        await conn.run_sync(metadata.create_all)
