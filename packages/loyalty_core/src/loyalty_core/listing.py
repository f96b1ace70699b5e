"""One page of a list: the rows of the page and how many the whole list holds, in two statements;
and a whole list streamed a chunk of rows at a time (the back office's exports)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy import Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Listed(Generic[T]):
    items: list[T]
    total: int


def offset_of(page: int, per_page: int) -> int:
    return (page - 1) * per_page


async def count_of(session: AsyncSession, statement: Select[Any]) -> int:
    """How many rows ``statement`` selects, ordering and paging left out."""
    inner = statement.order_by(None).limit(None).offset(None).subquery()
    return int(await session.scalar(select(func.count()).select_from(inner)) or 0)


async def page_of(session: AsyncSession, statement: Select[Any], *, page: int, per_page: int) -> Listed[Any]:
    """The ORM entities of one page of ``statement`` (already ordered) and the list's total."""
    total = await count_of(session, statement)
    if total == 0 or offset_of(page, per_page) >= total:
        return Listed([], total)
    rows = await session.scalars(statement.limit(per_page).offset(offset_of(page, per_page)))
    return Listed(list(rows.all()), total)


async def rows_of(session: AsyncSession, statement: Select[Any], *, page: int, per_page: int) -> Listed[Any]:
    """Like ``page_of``, for a statement of several columns: the rows as tuples."""
    total = await count_of(session, statement)
    if total == 0 or offset_of(page, per_page) >= total:
        return Listed([], total)
    rows = await session.execute(statement.limit(per_page).offset(offset_of(page, per_page)))
    return Listed([tuple(r) for r in rows.all()], total)


CHUNK = 1_000
"""Rows a streamed list reads from the server-side cursor at a time."""


async def stream_rows(
    sessionmaker: async_sessionmaker[AsyncSession], statement: Select[Any]
) -> AsyncIterator[Sequence[Sequence[Any]]]:
    """The rows of ``statement`` a chunk at a time from a server-side cursor, in a session of the
    stream's own (a page's session has answered by the time a streamed body is sent), so a list of
    any size holds one chunk in memory."""
    async with sessionmaker() as session:
        result = await session.stream(statement.execution_options(yield_per=CHUNK))
        async for part in result.partitions():
            yield part
