"""The tests share their PostgreSQL and Redis with whatever else lives there (a developer's databases,
another checkout's run): they make their own databases under names unique to the run, drop only
those, and never flush Redis."""

from __future__ import annotations

import re
import secrets
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import psycopg
import pytest
from psycopg import sql

from tests.support import database
from tests.support.database import (
    ROOT,
    database_name,
    delete_redis_keys,
    fresh_database,
    redis_prefix,
    server_url,
)
from tests.support.redis_server import own_redis_url, redis_url


def _names_in_a_new_process() -> str:
    code = "from tests.support.database import database_name; print(database_name('api'))"
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()


def _exists(name: str) -> bool:
    with psycopg.connect(server_url(), autocommit=True) as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is not None


def test_two_runs_never_share_a_database_name() -> None:
    first, second = _names_in_a_new_process(), _names_in_a_new_process()
    assert first != second
    assert database_name("api") != database_name("api")
    assert database.RUN_ID in database_name("api")


def test_a_database_the_run_did_not_create_is_neither_dropped_nor_reused() -> None:
    foreign = f"loyalty_test_foreign_{secrets.token_hex(4)}"
    with psycopg.connect(server_url(), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(foreign)))
    try:
        with pytest.raises(psycopg.errors.DuplicateDatabase):
            fresh_database(foreign)
        assert foreign not in database._created
        assert _exists(foreign)
    finally:
        with psycopg.connect(server_url(), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE {}").format(sql.Identifier(foreign)))


def test_the_run_drops_what_it_created_and_only_that(monkeypatch: pytest.MonkeyPatch) -> None:
    # a run of its own (the session's databases are still in use by the other tests)
    monkeypatch.setattr(database, "_created", [])
    monkeypatch.setattr(database, "_roles", [])
    made = fresh_database(database_name("isolation"))
    name = made.rsplit("/", 1)[1].split("?")[0]
    assert _exists(name)
    assert database.drop_created() == [name]
    assert not _exists(name)
    assert database.drop_created() == []


def test_a_refused_connection_at_the_end_is_a_warning_and_the_databases_stay_listed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The session's end never raises (an exception there hid the run's failure list): a server that
    refuses the connection that would drop the run's databases gives one warning line naming them."""
    monkeypatch.setattr(database, "_roles", [])
    made = fresh_database(database_name("refused"))
    name = made.rsplit("/", 1)[1].split("?")[0]
    monkeypatch.setattr(database, "_created", [name])
    role = f"loyalty_test_refused_{database.RUN_ID}"
    with psycopg.connect(server_url(), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN CONNECTION LIMIT 0").format(sql.Identifier(role)))
    try:
        refusing = server_url().replace("postgresql://postgres@", f"postgresql://{role}@", 1)
        monkeypatch.setattr(database, "server_url", lambda: refusing)
        said: list[str] = []
        database.finish_session(said.append)
        [line] = said
        assert line.startswith(f"warning: the test databases {name} were not dropped: connection failed")
        assert "too many connections" in line
        assert database.left_behind() == [name]
        monkeypatch.undo()
        assert _exists(name)
    finally:
        with psycopg.connect(server_url(), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


FULL = "connection failed: FATAL:  sorry, too many clients already"


def test_a_full_server_is_waited_out_with_back_off(monkeypatch: pytest.MonkeyPatch) -> None:
    pauses: list[float] = []
    monkeypatch.setattr(database, "time", SimpleNamespace(monotonic=time.monotonic, sleep=pauses.append))
    refusals = [psycopg.OperationalError(FULL), psycopg.OperationalError(FULL)]

    def attempt() -> str:
        if refusals:
            raise refusals.pop()
        return "connected"

    assert database.when_room(attempt) == "connected"
    assert pauses == [0.5, 1.0]


def test_a_server_full_for_longer_than_the_wait_fails_and_other_errors_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [0.0]
    # database's clock only: the sleeps pass at once and move it
    fake = SimpleNamespace(monotonic=lambda: clock[0], sleep=lambda seconds: clock.__setitem__(0, clock[0] + seconds))
    monkeypatch.setattr(database, "time", fake)

    def full() -> None:
        raise psycopg.OperationalError(FULL)

    with pytest.raises(psycopg.OperationalError, match="too many clients"):
        database.when_room(full, wait=20)
    assert 15 <= clock[0] <= 20  # 0.5 + 1 + 2 + 4 + 5 + 5 seconds, the next pause would pass the wait
    calls: list[int] = []

    def refused() -> None:
        calls.append(1)
        raise psycopg.OperationalError('connection failed: FATAL:  role "nobody" does not exist')

    with pytest.raises(psycopg.OperationalError, match="does not exist"):
        database.when_room(refused)
    assert calls == [1]


# spelled in parts, so that this file does not match its own search
FORBIDDEN = re.compile("flush" + "(db|all)|" + "DROP " + "DATABASE", re.IGNORECASE)
ALLOWED = {Path("tests/support/database.py"), Path("bench/_support.py"), Path(__file__).relative_to(ROOT)}


def test_no_test_or_bench_flushes_redis_or_drops_a_database_by_itself() -> None:
    """Only the two helpers that drop what their run created may drop a database; nothing flushes."""
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("tests", "bench")
        for path in (ROOT / folder).rglob("*.py")
        if path.relative_to(ROOT) not in ALLOWED and FORBIDDEN.search(path.read_text())
    ]
    assert offenders == []


def test_a_machine_without_a_redis_gets_one_of_its_own() -> None:
    """Where no Redis answers and none is configured, the run starts a redis-server of its own on a
    free port (once: a second call answers the same one) instead of skipping the Redis tests."""
    import redis

    url = own_redis_url()
    assert url.startswith("redis://127.0.0.1:")
    assert url != "redis://127.0.0.1:6379/15"
    assert own_redis_url() == url
    with redis.Redis.from_url(url) as client:
        assert client.ping() is True


def test_the_run_deletes_only_its_own_redis_keys() -> None:
    url = redis_url()
    import redis

    mine, foreign = f"{redis_prefix()}:isolation:k", f"loyalty_foreign_{secrets.token_hex(4)}:k"
    with redis.Redis.from_url(url) as client:
        client.set(mine, 1)
        client.set(foreign, 1, ex=60)
        try:
            with pytest.raises(ValueError, match="not under this run's Redis prefix"):
                delete_redis_keys(url, "loyalty")
            assert delete_redis_keys(url, f"{redis_prefix()}:isolation") == 1
            assert (client.exists(mine), client.exists(foreign)) == (0, 1)
        finally:
            client.delete(foreign)


def test_a_full_server_is_known_through_sqlalchemys_wrapper_too() -> None:
    """The migration of a suite's database meets a full server as SQLAlchemy's error, caused by
    psycopg's: it is waited out as well; another refusal is not."""
    from sqlalchemy.exc import OperationalError

    assert database.server_full(OperationalError("connect", {}, psycopg.OperationalError(FULL)))
    other = OperationalError("connect", {}, psycopg.OperationalError('FATAL:  role "nobody" does not exist'))
    assert not database.server_full(other)
    assert not database.server_full(ValueError("too many clients"))
