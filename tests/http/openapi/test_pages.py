"""Serving the documents and their pages: the public document needs no token and counts like any
tokenless request; the admin one takes the admin token; Swagger UI comes from the service itself, not
a CDN."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.app import ADMIN
from tests.support.envelope import error_of


async def test_public_document_needs_no_token_and_carries_rate_limit_headers(
    client: AsyncTestClient[Litestar],
) -> None:
    """RATE-5: the public document counts in the per-address allowance and says so in headers."""
    response = await client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    assert response.json()["openapi"] == "3.1.0"
    assert "/api/v1/customers" in response.json()["paths"]
    assert not any(p.startswith("/admin/") for p in response.json()["paths"])
    assert response.headers["x-ratelimit-limit"] == "100000"
    assert int(response.headers["x-ratelimit-remaining"]) < 100000


async def test_admin_document_takes_the_admin_token(client: AsyncTestClient[Litestar]) -> None:
    """AUTH-9: without the admin token 401 UNAUTHENTICATED; with it, only admin-token routes (the
    admin API and /metrics, OPS-2)."""
    refused = await client.get("/admin/v1/openapi.json")
    assert refused.status_code == 401
    assert error_of(refused)["code"] == "UNAUTHENTICATED"
    response = await client.get("/admin/v1/openapi.json", headers=ADMIN)
    assert response.status_code == 200
    paths = response.json()["paths"]
    assert paths
    assert all(p.startswith("/admin/v1/") for p in paths if p != "/metrics")
    assert "/metrics" in paths
    assert "x-ratelimit-limit" not in response.headers


async def test_docs_pages_name_only_assets_of_the_service(client: AsyncTestClient[Litestar]) -> None:
    """The pages' HTML names only this service's addresses; that they render, and that the browser
    then asks no other host, is checked in Chromium against a served instance (tests/api/docs)."""
    for page, document in (("/api/v1/docs", "/api/v1/openapi.json"), ("/admin/v1/docs", "/admin/v1/openapi.json")):
        response = await client.get(page)
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/html")
        html = response.text
        assert document in html
        assert "http://" not in html
        assert "https://" not in html
    script = await client.get("/api/v1/docs/swagger-ui-bundle.js")
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    # Swagger UI 5: the 4.x line refuses OpenAPI 3.1 documents
    assert 'PACKAGE_VERSION:"5.' in script.text
    style = await client.get("/api/v1/docs/swagger-ui.css")
    assert style.status_code == 200
    assert style.headers["content-type"].startswith("text/css")
    # the page's assets carry the rate-limit headers and count per address
    for asset in (script, style):
        assert asset.headers["x-ratelimit-limit"] == "100000"
        assert int(asset.headers["x-ratelimit-remaining"]) < 100000


async def test_admin_page_holds_nothing_of_the_admin_document(client: AsyncTestClient[Litestar]) -> None:
    """Opened without a token, the admin page is a shell with a token form: no path of the admin API."""
    response = await client.get("/admin/v1/docs")
    assert response.status_code == 200
    assert 'id="admin-token"' in response.text
    assert "/admin/v1/plans" not in response.text


async def test_form_body_that_looks_like_json_says_so(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-9: a form body with none of the endpoint's fields answers 422 naming each
    key; when the body looks like JSON the message says it was sent with a form content type."""
    response = await client.post(
        "/api/v1/customers",
        content=b'{"first_name":"Ann"}',
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "VALIDATION_ERROR"
    assert error["details"] == {'{"first_name":"Ann"}': ["This endpoint does not read this field."]}
    assert error["message"] == (
        "The body looks like JSON but was sent with a form content type; send it with Content-Type: application/json."
    )


async def test_form_body_not_looking_like_json_keeps_the_plain_message(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-9: other unread forms keep the generic message."""
    response = await client.post(
        "/api/v1/customers", content=b"colour=red", headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert response.status_code == 422
    error = error_of(response)
    assert error["message"] == "The given data was invalid."
    assert error["details"] == {"colour": ["This endpoint does not read this field."]}
