"""One page of a list: the rows of the page and how many the whole list holds, in two statements;
and a whole list streamed a chunk of rows at a time (the back office's exports).

How many a list holds is counted exactly up to ``EXACT_UP_TO`` rows and estimated beyond (INPUT-22):
a vendor's lists grow with its history (a million customers, millions of events), and counting
them all on every page would cost each request as much as the list is long."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy import Select, func, select
from sqlalchemy.exc import CompileError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Listed(Generic[T]):
    items: list[T]
    total: int


def offset_of(page: int, per_page: int) -> int:
    return (page - 1) * per_page


EXACT_UP_TO = 10_000
"""Lists are counted exactly up to this many rows (a bounded scan, at most this many index entries);
a longer list reports PostgreSQL's estimate of its length, never less than this plus one (INPUT-22)."""


async def count_of(session: AsyncSession, statement: Select[Any]) -> int:
    """How many rows ``statement`` selects, ordering and paging left out: exactly up to
    ``EXACT_UP_TO``, estimated beyond (INPUT-22)."""
    inner = statement.order_by(None).limit(None).offset(None)
    bounded = select(func.count()).select_from(inner.limit(EXACT_UP_TO + 1).subquery())
    counted = int(await session.scalar(bounded) or 0)
    if counted <= EXACT_UP_TO:
        return counted
    return max(counted, await _estimate(session, select(func.count()).select_from(inner.subquery())))


async def _estimate(session: AsyncSession, statement: Select[Any]) -> int:
    """The planner's estimate of the rows ``statement``'s count would count (one planning, no scan).
    The statement goes to the driver as it is, its values written in: no text of a value (a search
    term's ``:`` or ``%``) is read as a parameter."""
    try:
        compiled = statement.subquery().element.compile(
            dialect=session.get_bind().dialect, compile_kwargs={"literal_binds": True}
        )
    except CompileError:  # a value with no literal form: the exact count, as before
        return int(await session.scalar(statement) or 0)
    connection = await session.connection()
    plan: Any = (await connection.exec_driver_sql("EXPLAIN (FORMAT JSON) " + str(compiled))).scalar_one()
    # the count's input: the aggregate's only child
    return int(plan[0]["Plan"]["Plans"][0]["Plan Rows"])


def past_the_end(total: int, page: int, per_page: int) -> bool:
    """Whether ``page`` lies past a list of ``total`` rows; never for an estimated total, which may
    fall short of the rows there are."""
    return total == 0 or (total <= EXACT_UP_TO and offset_of(page, per_page) >= total)


async def page_of(session: AsyncSession, statement: Select[Any], *, page: int, per_page: int) -> Listed[Any]:
    """The ORM entities of one page of ``statement`` (already ordered) and the list's total."""
    total = await count_of(session, statement)
    if past_the_end(total, page, per_page):
        return Listed([], total)
    rows = await session.scalars(statement.limit(per_page).offset(offset_of(page, per_page)))
    return Listed(list(rows.all()), total)


async def rows_of(session: AsyncSession, statement: Select[Any], *, page: int, per_page: int) -> Listed[Any]:
    """Like ``page_of``, for a statement of several columns: the rows as tuples."""
    total = await count_of(session, statement)
    if past_the_end(total, page, per_page):
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
