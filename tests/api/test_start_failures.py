"""A command that cannot start ends at once with one line naming the cause and the setting to
change, and a non-zero exit (OPS-10). `loyalty serve`: a port in use, PostgreSQL unreachable or
refusing us, no room for the service's connections, a migration that fails; `db upgrade` and
`worker`: the database's host, port, role and name, and for the worker the schema's revision and
Redis; the back office's verbs: the service's address and the admin token. Each cause is made for
real (a listening socket, a closed port, a database or role with a CONNECTION LIMIT, a conflicting
table, a web server that answers something else).

The port case runs the console script's process; the others call its ``main`` in this process (what
that process runs, and the same settings from the environment), sparing a process start per case.
There granian's serve fails the test, so a start that ought to fail cannot go on to serve."""

from __future__ import annotations

import io
import os
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest
from psycopg import sql

from loyalty_api import migrate
from loyalty_api.cli import main
from tests.support.database import (
    database_name,
    fresh_database,
    owned_database,
    server_url,
    to_sqlalchemy,
    with_database,
)
from tests.support.ports import free_port
from tests.support.served import run_serve, serve_environment

Start = Callable[[dict[str, str]], subprocess.CompletedProcess[str]]
Command = Callable[[list[str], dict[str, str]], subprocess.CompletedProcess[str]]


def the_one_line(result: object, code: int = 1) -> str:
    """The failed start's last line; nothing before it may be a traceback."""
    assert getattr(result, "returncode", None) == code, result
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
def command(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Iterator[Command]:
    """A verb of ``loyalty`` in this process with ``env`` as its whole environment, to its end: its
    exit status and output as ``run_serve`` answers them. The environment is restored afterwards (a
    start that went on would have set settings of its own in it)."""
    from granian import Granian

    def serves(*args: object, **kwargs: object) -> None:
        raise AssertionError("the start went on to serve")

    monkeypatch.setattr(Granian, "serve", serves)
    outer = dict(os.environ)

    def run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        os.environ.clear()
        os.environ.update(env)
        capsys.readouterr()
        code = main(argv)
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["loyalty", *argv], code, out, err)

    try:
        yield run
    finally:
        os.environ.clear()
        os.environ.update(outer)


@pytest.fixture
def start(command: Command) -> Start:
    """``loyalty serve``, as ``command`` runs it."""
    return lambda env: command(["serve"], env)


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


# --- the other commands that use the database or Redis: the same checks, the same lines (OPS-10) ----

DATABASE_VERBS = [["db", "upgrade"], ["worker"]]
UNKNOWN_HOST = "no-such-host.invalid"


@pytest.mark.parametrize("argv", DATABASE_VERBS, ids=" ".join)
def test_an_unknown_database_host_is_one_line(command: Command, argv: list[str], tmp_path: Path) -> None:
    """OPS-10: the README's own example, ``postgresql+psycopg://user:password@host:5432/db``, printed a
    110-line traceback from ``db upgrade``."""
    url = f"postgresql+psycopg://postgres@{UNKNOWN_HOST}:5432/loyalty"
    line = the_one_line(command(argv, serve_environment(url, tmp_path)))
    assert line == (
        f"loyalty: cannot reach PostgreSQL at {UNKNOWN_HOST}:5432/loyalty: no host is known as '{UNKNOWN_HOST}'; "
        "correct DATABASE_URL"
    )


@pytest.mark.parametrize("argv", DATABASE_VERBS, ids=" ".join)
def test_a_closed_database_port_is_one_line(command: Command, argv: list[str], tmp_path: Path) -> None:
    """OPS-10: ``loyalty worker`` against a closed port printed 30 seconds of pool warnings and a traceback."""
    port = free_port()
    url = f"postgresql+psycopg://postgres@127.0.0.1:{port}/loyalty"
    line = the_one_line(command(argv, serve_environment(url, tmp_path)))
    assert line.startswith(f"loyalty: cannot reach PostgreSQL at 127.0.0.1:{port}/loyalty (")
    assert "Connection refused" in line
    assert line.endswith("; start the database or correct DATABASE_URL (unset, an embedded PostgreSQL is started)")


@pytest.mark.parametrize("argv", DATABASE_VERBS, ids=" ".join)
def test_a_missing_database_is_one_line(command: Command, argv: list[str], tmp_path: Path) -> None:
    """OPS-10: a database name nobody created: the server's own words, and the setting."""
    name = database_name("start_missing")
    url = to_sqlalchemy(with_database(server_url(), name))
    line = the_one_line(command(argv, serve_environment(url, tmp_path)))
    assert f'refused the connection (database "{name}" does not exist); ' in line
    assert line.endswith("correct the user, password or database name in DATABASE_URL")


@pytest.mark.parametrize("argv", DATABASE_VERBS, ids=" ".join)
def test_a_missing_role_is_one_line(command: Command, argv: list[str], database_url: str, tmp_path: Path) -> None:
    """OPS-10: a role the server does not know: the server's own words, and the setting."""
    role = database_name("no_role")  # never created
    url = database_url.replace("postgresql+psycopg://postgres@", f"postgresql+psycopg://{role}@", 1)
    line = the_one_line(command(argv, serve_environment(url, tmp_path)))
    assert f'refused the connection (role "{role}" does not exist); ' in line
    assert line.endswith("correct the user, password or database name in DATABASE_URL")


def test_a_worker_on_a_database_behind_the_release_is_one_line(command: Command, tmp_path: Path) -> None:
    """OPS-10: the worker migrates nothing: on a database not migrated to its release it stops at once."""
    name = database_name("start_behind")
    url = fresh_database(name)
    line = the_one_line(command(["worker"], serve_environment(url, tmp_path)))
    head = migrate.behind(set())
    server = urlsplit(server_url())  # the tests' server, wherever LOYALTY_TEST_DATABASE_URL puts it
    where = f"{server.hostname}:{server.port or 5432}"
    assert line == (
        f"loyalty: the database at {where}/{name} is not migrated to this release (revision none, this "
        f"release needs {head}); run `loyalty db upgrade`, or correct DATABASE_URL"
    )


def test_a_worker_without_its_redis_is_one_line(command: Command, database_url: str, tmp_path: Path) -> None:
    """OPS-10: the worker takes its jobs from Redis: without it, it does not start."""
    port = free_port()
    env = serve_environment(database_url, tmp_path, REDIS_URL=f"redis://127.0.0.1:{port}/0")
    line = the_one_line(command(["worker"], env))
    assert line == (
        f"loyalty: cannot reach Redis at 127.0.0.1:{port}/0 (Connection refused); start Redis or correct REDIS_URL "
        "(unset, the queue runs on PostgreSQL)"
    )


def test_a_worker_with_an_unknown_redis_host_is_one_line(command: Command, database_url: str, tmp_path: Path) -> None:
    """OPS-10: a Redis host no name server knows."""
    env = serve_environment(database_url, tmp_path, REDIS_URL=f"redis://{UNKNOWN_HOST}:6379/0")
    line = the_one_line(command(["worker"], env))
    assert line == (
        f"loyalty: cannot reach Redis at {UNKNOWN_HOST}:6379/0: no host is known as '{UNKNOWN_HOST}'; correct REDIS_URL"
    )


def test_db_upgrade_needs_no_redis(command: Command, database_url: str, tmp_path: Path) -> None:
    """OPS-10: ``db upgrade`` uses only the database: a Redis that does not answer is no reason to refuse."""
    env = serve_environment(database_url, tmp_path, REDIS_URL=f"redis://127.0.0.1:{free_port()}/0")
    result = command(["db", "upgrade"], env)
    assert (result.returncode, result.stderr.strip().splitlines()) == (0, ["loyalty: migrating to head"])


def test_serve_without_its_redis_says_so_in_one_line_and_serves(
    command: Command, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OPS-10: ``serve`` runs degraded without Redis (per-process limits, jobs waiting): it says so and serves."""
    from granian import Granian

    served: list[bool] = []
    monkeypatch.setattr(Granian, "serve", lambda *args, **kwargs: served.append(True))
    port = free_port()
    env = serve_environment(
        database_url, tmp_path, LOYALTY_PORT=str(free_port()), REDIS_URL=f"redis://127.0.0.1:{port}/0"
    )
    result = command(["serve"], env)
    assert (result.returncode, served) == (0, [True])
    assert (
        f"loyalty: cannot reach Redis at 127.0.0.1:{port}/0 (Connection refused); start Redis or correct REDIS_URL "
        "(unset, the queue runs on PostgreSQL); serving meanwhile: rate limits count per process and queued jobs "
        "wait until it answers"
    ) in result.stderr.splitlines()


# the back office's verbs call the running service: their checks are the service's answer

SERVICE_VERBS = [["plans", "list"], ["users", "create", "--vendor-id", "1", "--email", "owner@shop.example"]]


@pytest.fixture
def answering() -> Iterator[Callable[[int, bytes], str]]:
    """A web server on a free port that answers every request with one status and body: its URL."""
    servers: list[ThreadingHTTPServer] = []

    def serve(status: int, body: bytes) -> str:
        class Answer(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

            def log_message(self, *args: object) -> None:
                return

        server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


def back_office(command: Command, argv: list[str], url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr("sys.stdin", io.StringIO("a password long enough\n"))  # users create reads it
    result = command([*argv, "--url", url], serve_environment("", tmp_path))
    return the_one_line(result, code=2 if "cannot reach" in result.stderr or "not the loyalty" in result.stderr else 1)


@pytest.mark.parametrize("argv", SERVICE_VERBS, ids=" ".join)
def test_a_back_office_verb_with_an_unknown_service_host_is_one_line(
    command: Command, argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OPS-10: the back office's verbs call the running service: a host no name server knows."""
    url = f"http://{UNKNOWN_HOST}:8000"
    assert back_office(command, argv, url, tmp_path, monkeypatch) == (
        f"loyalty: cannot reach the service at {url}: no host is known as '{UNKNOWN_HOST}'; set --url or "
        "LOYALTY_PUBLIC_URL to its address"
    )


@pytest.mark.parametrize("argv", SERVICE_VERBS, ids=" ".join)
def test_a_back_office_verb_without_its_service_is_one_line(
    command: Command, argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OPS-10: nothing listens at the service's address."""
    url = f"http://127.0.0.1:{free_port()}"
    assert back_office(command, argv, url, tmp_path, monkeypatch) == (
        f"loyalty: cannot reach the service at {url} (Connection refused); is `loyalty serve` running? Set --url or "
        "LOYALTY_PUBLIC_URL to its address"
    )


@pytest.mark.parametrize("argv", SERVICE_VERBS, ids=" ".join)
def test_a_back_office_verb_with_another_admin_token_is_one_line(
    command: Command,
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    answering: Callable[[int, bytes], str],
) -> None:
    """OPS-10: the service refuses this machine's admin token."""
    refused = b'{"error": {"code": "UNAUTHORIZED", "message": "Invalid admin token.", "status": 401}}'
    assert back_office(command, argv, answering(401, refused), tmp_path, monkeypatch) == (
        "loyalty: 401 UNAUTHORIZED: Invalid admin token.; the admin token (LOYALTY_ADMIN_TOKEN, else the one in "
        "LOYALTY_HOME) is not the service's"
    )


@pytest.mark.parametrize("argv", SERVICE_VERBS, ids=" ".join)
def test_a_back_office_verb_answered_by_another_server_is_one_line(
    command: Command,
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    answering: Callable[[int, bytes], str],
) -> None:
    """OPS-10: another web server answers at that address, with a page instead of the API's JSON."""
    url = answering(200, b"<html>a shop's web site</html>")
    assert back_office(command, argv, url, tmp_path, monkeypatch) == (
        f"loyalty: the answer from {url} is not the loyalty service's; set --url or LOYALTY_PUBLIC_URL to its address"
    )
