"""Size limits as a client meets them on the served process (granian, ``loyalty serve``).

A body just over ``LOYALTY_MAX_BODY_BYTES`` gets its 413 envelope even while the client is still
sending it: the service reads and drops up to a bounded amount past the limit before it answers,
where stopping at the limit and closing left a client that sends its body in parts a broken pipe
and no answer (INPUT-6).

A request line longer than the server takes never reaches the application: granian answers 414 (or
431 past its header buffer) itself, with an empty body and no ``X-Request-ID``, and closes. The
README's "Limits" names the size; this test pins where it lies.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.ports import free_port
from tests.support.processes import started

MAX_BODY = 1024
LONGEST_TARGET = 65_534
"""The longest request target the server parses (its URI type stores lengths below 2**16 - 1)."""


@pytest.fixture(scope="module")
def served(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    port = free_port()
    home: Path = tmp_path_factory.mktemp("serve-limits")
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "LOYALTY_PORT": str(port),
        "LOYALTY_HOME": str(home),
        "LOYALTY_MAX_BODY_BYTES": str(MAX_BODY),
    }
    env.pop("REDIS_URL", None)
    with started([sys.executable, "-m", "loyalty_api.cli", "serve"], env, home / "serve.log") as command:
        command.wait_answering(f"http://127.0.0.1:{port}/health/live")
        yield port
        command.stop()


def _answer(sock: socket.socket) -> tuple[str, dict[str, str], bytes]:
    """The status line, headers and body of one response (its Content-Length read whole)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    while len(body) < int(headers.get("content-length", "0")):
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return status, headers, body


@pytest.mark.parametrize("over", [1, 700, 5_000, 60_000])
def test_a_body_just_over_the_limit_gets_its_413_while_still_being_sent(served: int, over: int) -> None:
    """Every one of 20 sends, each writing the body in parts after the headers, reads the 413
    envelope; none meets a reset connection or a broken pipe."""
    body = b"{" + b" " * (MAX_BODY + over - 2) + b"}"
    head = (
        f"POST /admin/v1/plans HTTP/1.1\r\nHost: loyalty\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    for _ in range(20):
        with socket.create_connection(("127.0.0.1", served), timeout=10) as sock:
            sock.sendall(head + body[:512])
            time.sleep(0.01)  # the service decides on the announced length before the rest arrives
            for start in range(512, len(body), 4096):
                sock.sendall(body[start : start + 4096])
            status, headers, answer = _answer(sock)
        assert status == "HTTP/1.1 413 Payload Too Large", (status, answer)
        error = json.loads(answer)["error"]
        assert (error["code"], error["status"]) == ("PAYLOAD_TOO_LARGE", 413)
        assert error["request_id"] == headers["x-request-id"]


def test_a_request_line_past_the_servers_limit_is_answered_by_the_server(served: int) -> None:
    """Up to the limit the application answers with its envelope; past it the server's bare 414."""
    fits = "/admin/v1/" + "a" * (LONGEST_TARGET - len("/admin/v1/"))
    with socket.create_connection(("127.0.0.1", served), timeout=10) as sock:
        sock.sendall(f"GET {fits} HTTP/1.1\r\nHost: loyalty\r\n\r\n".encode())
        status, headers, answer = _answer(sock)
    assert status == "HTTP/1.1 404 Not Found"
    assert json.loads(answer)["error"]["code"] == "ROUTE_NOT_FOUND"
    assert headers["x-request-id"]
    with socket.create_connection(("127.0.0.1", served), timeout=10) as sock:
        sock.sendall(f"GET {fits}a HTTP/1.1\r\nHost: loyalty\r\n\r\n".encode())
        status, headers, answer = _answer(sock)
    assert (status, answer, headers.get("connection")) == ("HTTP/1.1 414 URI Too Long", b"", "close")
    assert "x-request-id" not in headers
