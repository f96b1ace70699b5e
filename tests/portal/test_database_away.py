"""PORTAL-8: while PostgreSQL refuses connections (none listening, or too many clients) a portal page
answers 503 with its error page and Retry-After, as the API does, never a 500."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import msgspec
import psycopg
import pytest
from litestar.testing import AsyncTestClient
from sqlalchemy.engine import make_url

from loyalty_api.app import create_app
from loyalty_api.settings import Settings

UNAVAILABLE = "The service cannot reach its database just now; nothing was changed. Try again in a moment."


@pytest.fixture
def full_role(database_url: str) -> Iterator[str]:
    """A database URL whose role may hold no connection: every connect is refused as ``too many``."""
    role = f"portal_full_{uuid.uuid4().hex[:8]}"
    admin_url = make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE ROLE "{role}" LOGIN CONNECTION LIMIT 0')
    try:
        yield make_url(database_url).set(username=role).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP ROLE "{role}"')


@pytest.mark.parametrize("refusal", ["nothing listening", "too many clients"])
async def test_pages_answer_503_with_retry_after_while_the_database_refuses(
    settings: Settings, full_role: str, refusal: str
) -> None:
    url = "postgresql+psycopg://postgres@127.0.0.1:1/none" if refusal == "nothing listening" else full_role
    refusing = msgspec.structs.replace(settings, database_url=url, worker="external")
    async with AsyncTestClient(app=create_app(refusing)) as client:
        client.follow_redirects = False
        for method, path in (("GET", "/portal/login"), ("GET", "/portal/customers"), ("POST", "/portal/login")):
            answer = await client.request(
                method,
                path,
                data={"email": "a@b.example", "password": "x"},
                headers={"Cookie": "loyalty_portal_session=a-session-to-look-up"},
            )
            assert answer.status_code == 503, (method, path, answer.text)
            assert answer.headers["retry-after"] == "1"
            assert answer.headers["content-type"].startswith("text/html")
            assert UNAVAILABLE in answer.text
