"""The process's database connections (docs/architecture.md, "Hot paths"): one budget, two pools."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.db import give_back_idle, make_driver_pool, make_engine, split_pool


@pytest.mark.parametrize(("size", "shares"), [(1, (1, 1)), (2, (1, 1)), (5, (2, 3)), (10, (5, 5)), (16, (8, 8))])
def test_the_budget_is_shared_out_with_at_least_one_each(size: int, shares: tuple[int, int]) -> None:
    assert split_pool(size) == shares


async def test_the_till_pool_keeps_the_engines_database_and_lock_timeout(engine: AsyncEngine) -> None:
    url = engine.url.render_as_string(hide_password=False)
    quick = make_engine(url, lock_timeout_ms=250)
    pool = make_driver_pool(quick, size=1, filled=True)  # one connection: the second checkout is the first's
    await pool.open(wait=True)
    try:
        assert pool.get_stats()["pool_size"] == 1
        async with pool.connection() as conn:
            assert conn.autocommit
            row = await (await conn.execute("SELECT current_database(), current_setting('lock_timeout')")).fetchone()
            assert row == (quick.url.database, "250ms")
            await conn.set_autocommit(False)
            await conn.execute("SELECT 1")
            # whatever a request left open is rolled back and autocommit comes back, before the pool
            # has it (the pool has no reset function: that would cost a worker task per return)
            await give_back_idle(conn)
            assert conn.autocommit
            assert conn.info.transaction_status.name == "IDLE"
        async with pool.connection() as again:
            assert again.autocommit
            assert again.info.transaction_status.name == "IDLE"
    finally:
        await pool.close()
        await quick.dispose()


async def test_a_connection_given_back_failed_is_rolled_back_and_one_lost_is_closed(engine: AsyncEngine) -> None:
    pool = make_driver_pool(engine, size=2, filled=True)
    await pool.open(wait=True)
    try:
        conn = await pool.getconn()
        await conn.set_autocommit(False)
        with pytest.raises(psycopg.errors.DivisionByZero):
            await conn.execute("SELECT 1 / 0")
        await give_back_idle(conn)
        assert (conn.autocommit, conn.info.transaction_status.name) == (True, "IDLE")
        await conn.set_autocommit(False)
        await conn.execute("SELECT 1")
        async with pool.connection() as other:  # the pool's other connection
            await other.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))
        await give_back_idle(conn)  # its rollback fails: closed, not given back half-reset
        assert conn.closed
        await pool.putconn(conn)
        async with pool.connection() as again:
            assert again.autocommit
            assert await (await again.execute("SELECT 1")).fetchone() == (1,)
    finally:
        await pool.close()


async def test_an_unfilled_pool_opens_one_connection_and_grows_on_demand(engine: AsyncEngine) -> None:
    pool = make_driver_pool(engine, size=3, filled=False)
    await pool.open(wait=True)
    try:
        assert (pool.get_stats()["pool_min"], pool.get_stats()["pool_max"]) == (1, 3)
    finally:
        await pool.close()


async def test_every_connection_opens_without_jit(engine: AsyncEngine) -> None:
    """OPS-13: both pools' connections run with JIT off and the engine's lock timeout."""
    url = engine.url.render_as_string(hide_password=False)
    quick = make_engine(url, lock_timeout_ms=250)
    pool = make_driver_pool(quick, size=1, filled=False)
    await pool.open(wait=True)
    try:
        async with quick.connect() as orm:
            settings = (
                await orm.exec_driver_sql("SELECT current_setting('jit'), current_setting('lock_timeout')")
            ).one()
            assert tuple(settings) == ("off", "250ms")
        async with pool.connection() as conn:
            row = await (
                await conn.execute("SELECT current_setting('jit'), current_setting('lock_timeout')")
            ).fetchone()
            assert row == ("off", "250ms")
    finally:
        await pool.close()
        await quick.dispose()
