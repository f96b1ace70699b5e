"""`loyalty serve` that cannot start ends at once with one line naming the cause and the setting to
change, and a non-zero exit: a port in use, PostgreSQL unreachable or refusing us, no room for the
service's connections, a migration that fails. Each cause is made for real (a listening socket, a
closed port, a database or role with a CONNECTION LIMIT, a conflicting table).

The port case runs the console script's process; the others call its ``main`` in this process (what
that process runs, and the same settings from the environment), sparing a process start per case.
There granian's serve fails the test, so a start that ought to fail cannot go on to serve."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from loyalty_api.cli import main
from tests.support.database import database_name, owned_database, server_url, to_sqlalchemy, with_database
from tests.support.ports import free_port
from tests.support.served import run_serve, serve_environment

Start = Callable[[dict[str, str]], subprocess.CompletedProcess[str]]


def the_one_line(result: object) -> str:
    """The failed start's last line; nothing before it may be a traceback."""
    assert getattr(result, "returncode", None) == 1
    output = f"{getattr(result, 'stdout', '')}{getattr(result, 'stderr', '')}"
    assert "Traceback" not in output
    last: str = getattr(result, "stderr", "").strip().splitlines()[-1]
    assert last.startswith("loyalty: ")
    return last


@pytest.fixture
def limited(tmp_path: Path) -> tuple[str, str]:
    """A role that is not a superuser (PostgreSQL's connection limits do not apply to superusers) and
    an empty database it owns; both dropped when the session ends."""
    role = database_name("start_role")
    name = database_name("start")
    owned_database(name, role)
    return role, name


@pytest.fixture
def start(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Iterator[Start]:
    """``loyalty serve`` in this process with ``env`` as its whole environment, to its end: its exit
    status and output as ``run_serve`` answers them. The environment is restored afterwards (a start
    that went on would have set settings of its own in it)."""
    from granian import Granian

    def serves(*args: object, **kwargs: object) -> None:
        raise AssertionError("the start went on to serve")

    monkeypatch.setattr(Granian, "serve", serves)
    outer = dict(os.environ)

    def run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        os.environ.clear()
        os.environ.update(env)
        capsys.readouterr()
        code = main(["serve"])
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["loyalty", "serve"], code, out, err)

    try:
        yield run
    finally:
        os.environ.clear()
        os.environ.update(outer)


def url_as(role: str, name: str) -> str:
    base = with_database(server_url(), name).replace("postgresql://postgres@", f"postgresql://{role}@", 1)
    return to_sqlalchemy(base)


def test_a_port_in_use_names_the_port_setting(database_url: str, tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = run_serve(serve_environment(database_url, tmp_path, LOYALTY_PORT=str(port)))
    line = the_one_line(result)
    assert line == (
        f"loyalty: cannot listen on 127.0.0.1:{port}: Address already in use; stop what holds the port or set "
        "LOYALTY_PORT (or --port)"
    )


def test_an_unreachable_database_names_database_url(start: Start, tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    url = f"postgresql+psycopg://postgres@127.0.0.1:{port}/loyalty"
    line = the_one_line(start(serve_environment(url, tmp_path, LOYALTY_PORT=str(free_port()))))
    assert line.startswith(f"loyalty: cannot reach PostgreSQL at 127.0.0.1:{port}/loyalty (")
    assert "Connection refused" in line
    assert line.endswith("; start the database or correct DATABASE_URL (unset, an embedded PostgreSQL is started)")


def test_a_database_that_refuses_us_names_database_url(start: Start, tmp_path: Path) -> None:
    name = database_name("start_missing")
    url = to_sqlalchemy(with_database(server_url(), name))
    line = the_one_line(start(serve_environment(url, tmp_path, LOYALTY_PORT=str(free_port()))))
    assert f'refused the connection (database "{name}" does not exist); ' in line
    assert line.endswith("correct the user, password or database name in DATABASE_URL")


def test_a_database_without_room_for_one_connection(start: Start, limited: tuple[str, str], tmp_path: Path) -> None:
    role, name = limited
    with psycopg.connect(server_url(), autocommit=True) as conn:
        conn.execute(sql.SQL("ALTER DATABASE {} CONNECTION LIMIT 0").format(sql.Identifier(name)))
    line = the_one_line(start(serve_environment(url_as(role, name), tmp_path, LOYALTY_PORT=str(free_port()))))
    assert f'no room for the migrations\' connection (too many connections for database "{name}"); ' in line
    assert line.endswith(
        "raise max_connections or the role's or database's CONNECTION LIMIT in PostgreSQL, or lower "
        "LOYALTY_DB_POOL_SIZE or LOYALTY_WORKERS"
    )


def test_a_database_without_room_for_the_pools_fails_before_serving(
    start: Start, limited: tuple[str, str], tmp_path: Path
) -> None:
    """Room for the migrations but not for the pools every server process fills at start: the start
    ends before granian, instead of a worker's PoolTimeout after 30 seconds."""
    role, name = limited
    with psycopg.connect(server_url(), autocommit=True) as conn:
        conn.execute(sql.SQL("ALTER ROLE {} CONNECTION LIMIT 5").format(sql.Identifier(role)))
    env = serve_environment(url_as(role, name), tmp_path, LOYALTY_PORT=str(free_port()), LOYALTY_DB_POOL_SIZE="6")
    result = start(env)
    line = the_one_line(result)
    assert "serving on" not in result.stderr
    assert (
        "no room for the 10 connections the service holds (1 process(es) x LOYALTY_DB_POOL_SIZE=6 + 4 for the job "
        f'queue) (too many connections for role "{role}"); '
    ) in line
    assert line.endswith("or lower LOYALTY_DB_POOL_SIZE or LOYALTY_WORKERS")


def test_a_migration_that_fails_names_the_database(start: Start, limited: tuple[str, str], tmp_path: Path) -> None:
    role, name = limited
    url = url_as(role, name)
    with psycopg.connect(url.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute("CREATE TABLE plans (something_else text)")  # what the first migration creates
    line = the_one_line(start(serve_environment(url, tmp_path, LOYALTY_PORT=str(free_port()))))
    assert line.startswith("loyalty: the database migrations failed on ")
    assert f"/{name} (DuplicateTable: " in line
    assert 'relation "plans" already exists' in line
    assert line.endswith(
        "DATABASE_URL must name an empty database or one this service migrated, then `loyalty db upgrade`"
    )
