"""One page of a list: the rows of the page and how many the whole list holds, in two statements;
a page of a back-office list whose count and depth are capped (``Paged``, PORTAL-18); and a whole list
streamed a chunk of rows at a time (the back office's exports).

How many an admin API list holds is counted exactly up to ``COUNT_CAP`` rows and estimated beyond
(INPUT-22): a vendor's lists grow with its history (a million customers, millions of events), and
counting them all on every page would cost each request as much as the list is long."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
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


def _cap(cap: int | None) -> int:
    """A list's own cap, or the general one (read when called: a test may lower it)."""
    return COUNT_CAP if cap is None else cap


COUNT_CAP = 10_000
"""How far a list is counted exactly (a bounded scan: at most this many index entries, one more to
know there are more). Past it, an admin API list reports PostgreSQL's estimate of its length, never
less than this plus one (INPUT-22), and a back-office list reads ``10,000+`` and pages no deeper, so
a narrower filter reaches the rest (PORTAL-18)."""

NAME_COUNT_CAP = 1_000
"""How far a search by part of a name is counted exactly (INPUT-23): a few letters match tens of
thousands of names through the trigram index, and each match is read from the table to check it, so
the general cap would cost a search by three letters a hundred milliseconds and more at a million
customers. Past it the total is a lower bound (API) or ``1,000+`` (portal)."""


async def count_of(session: AsyncSession, statement: Select[Any], *, cap: int | None = None) -> int:
    """How many rows ``statement`` selects, ordering and paging left out: exactly up to ``cap``,
    estimated beyond (INPUT-22); under a lower cap than ``COUNT_CAP`` (a name's search, INPUT-23),
    ``cap`` plus one beyond: the only figure such a count knows to be true."""
    counted, more = await capped_count(session, statement, cap=cap)
    if not more:
        return counted
    if cap is not None and cap < COUNT_CAP:
        return cap + 1
    inner = statement.order_by(None).limit(None).offset(None)
    return max(COUNT_CAP + 1, await _estimate(session, select(func.count()).select_from(inner.subquery())))


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


def past_the_end(total: int, page: int, per_page: int, *, cap: int | None = None) -> bool:
    """Whether ``page`` lies past a list of ``total`` rows counted up to ``cap``; never for an
    estimated total or a lower bound (past the cap), which may fall short of the rows there are."""
    return total == 0 or (total <= _cap(cap) and offset_of(page, per_page) >= total)


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


PER_PAGE = 50
"""Rows on a page of a back-office list."""


@dataclass(frozen=True, slots=True)
class Paged(Generic[T]):
    """One page of a back-office list: its rows, where it starts (1-based page), and how many rows the
    list holds, counted up to ``cap`` (``more``: there are more than that), which is also as deep as
    the list pages."""

    items: list[T]
    page: int
    per_page: int
    total: int
    more: bool
    cap: int | None = None

    @property
    def first(self) -> int:
        return offset_of(self.page, self.per_page) + 1 if self.items else 0

    @property
    def last(self) -> int:
        return offset_of(self.page, self.per_page) + len(self.items)

    @property
    def has_next(self) -> bool:
        return self.last < self.total and self.last < _cap(self.cap)

    @property
    def too_deep(self) -> bool:
        """The rows past this page are out of the list's reach: it starts past the cap, or ends at
        it with more rows left; a narrower filter reaches them."""
        start = offset_of(self.page, self.per_page)
        return start >= _cap(self.cap) or (self.more and start + len(self.items) >= _cap(self.cap))


def last_page(per_page: int = PER_PAGE) -> int:
    """The deepest page a back-office list serves."""
    return -(-COUNT_CAP // per_page)


def counted(items: list[T], total: int, *, page: int, per_page: int) -> Paged[T]:
    """A page read by a read that counts its whole list itself (one customer's ledger or purchases,
    counted through the customer's index), shown with the same cap."""
    return Paged(items, page, per_page, min(total, COUNT_CAP), total > COUNT_CAP)


def bounded_page(page: int, per_page: int = PER_PAGE) -> int:
    """``page`` kept to the pages a back-office list serves."""
    return max(1, min(page, last_page(per_page) + 1))


async def capped_count(session: AsyncSession, statement: Select[Any], *, cap: int | None = None) -> tuple[int, bool]:
    """How many rows ``statement`` selects, counting no further than ``cap`` (one more to know
    there are more): the work is bounded whatever the list's size. Give it the narrowest statement
    that selects the same rows (the ids, with the filter's joins only)."""
    cap = _cap(cap)
    inner = statement.order_by(None).limit(cap + 1).offset(None).subquery()
    counted = int(await session.scalar(select(func.count()).select_from(inner)) or 0)
    return min(counted, cap), counted > cap


async def paged(
    session: AsyncSession,
    statement: Select[Any] | Callable[[int, int], Select[Any]],
    *,
    count: Select[Any],
    page: int,
    per_page: int = PER_PAGE,
    entities: bool = False,
    cap: int | None = None,
) -> Paged[Any]:
    """One page of ``statement`` (already ordered, by a unique key last), at an offset below
    ``COUNT_CAP``, with the capped count of ``count``: rows as tuples, or the first column's ORM
    entities with ``entities``. A list whose rows cost more than their key gives instead a function
    of the page's limit and offset that builds the page's statement, choosing the page's keys first
    (INPUT-22). ``cap``: how far it counts and pages (a name's search: ``NAME_COUNT_CAP``)."""
    page = bounded_page(page, per_page)
    total, more = await capped_count(session, count, cap=cap)
    if total == 0 or offset_of(page, per_page) >= min(total, _cap(cap)):
        return Paged([], page, per_page, total, more, cap)
    # the page ends at the cap too: past it the list is not paged, only narrowed
    limit, offset = min(per_page, _cap(cap) - offset_of(page, per_page)), offset_of(page, per_page)
    window = statement(limit, offset) if callable(statement) else statement.limit(limit).offset(offset)
    if entities:
        return Paged(list((await session.scalars(window)).all()), page, per_page, total, more, cap)
    return Paged([tuple(r) for r in (await session.execute(window)).all()], page, per_page, total, more, cap)


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
