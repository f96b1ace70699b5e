"""Logs never hold personal data, secrets, tokens or the unsubscribe token (OPS-6)."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from structlog.testing import capture_logs

from tests.support.app import ADMIN


async def test_a_500_logs_neither_bind_parameters_nor_the_database_message(
    client: AsyncTestClient[Litestar],
) -> None:
    with capture_logs() as logs:
        response = await client.get("/api/v1/probe/db-boom", headers=ADMIN)
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "INTERNAL_ERROR"
    [entry] = [e for e in logs if e["event"] == "unhandled error"]
    assert "jane.doe" not in repr(logs)
    assert "exc_info" not in entry
    assert entry["route"] == "/api/v1/probe/db-boom"
    assert entry["error"] == "sqlalchemy.exc.DataError"
    assert entry["sqlstate"] == "22P02"
    assert any(frame.endswith("in db_boom") for frame in entry["frames"])


async def test_the_access_log_names_the_route_template_not_the_unsubscribe_token(
    client: AsyncTestClient[Litestar],
) -> None:
    token = "AbCdEf0123456789.secret-looking-token"
    with capture_logs() as logs:
        await client.get(f"/unsubscribe/{token}")
    [entry] = [e for e in logs if e["event"] == "request"]
    assert token not in repr(logs)
    assert entry["path"].startswith("/unsubscribe/{")


async def test_an_unmatched_path_keeps_only_its_plain_words(client: AsyncTestClient[Litestar]) -> None:
    with capture_logs() as logs:
        response = await client.get("/api/v1/customers/by-external-id/jane.doe@example.com/nope/more")
    assert response.status_code == 404
    [entry] = [e for e in logs if e["event"] == "request"]
    assert entry["path"] == "/api/v1/customers/by-external-id/*/nope/more"


@pytest.mark.parametrize(
    ("asked", "logged"),
    [
        ("/favicon.ico", "/favicon.ico"),
        ("/api/v2/Customers/list.json", "/api/v2/Customers/list.json"),
        ("/api/v1/nope/0612345678", "/api/v1/nope/*"),
        ("/api/v1/nope/ann%20smith/x", "/api/v1/nope/*/x"),
        ("/api/v1/nope/" + "a" * 33, "/api/v1/nope/*"),
    ],
)
async def test_an_unmatched_path_is_logged_as_asked_but_for_what_could_identify(
    client: AsyncTestClient[Litestar], asked: str, logged: str
) -> None:
    """A 404's line names the path that was asked for, so an operator sees what callers look for;
    a segment with many digits, an address, a space or a long token is still left out."""
    with capture_logs() as logs:
        response = await client.get(asked)
    assert response.status_code == 404
    [entry] = [e for e in logs if e["event"] == "request"]
    assert entry["path"] == logged
