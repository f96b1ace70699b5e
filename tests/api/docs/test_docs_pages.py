"""The docs pages in a real browser against a served instance: Swagger UI renders the OpenAPI 3.1
documents (every operation listed), "Try it out" reaches the API with a token, the admin page shows
nothing of its document before the admin token is given, and the browser asks no other host.

With ``LOYALTY_DOCS_SCREENSHOTS`` set (``just screenshots``), the rendered pages are saved there."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
from playwright.async_api import Page

from tests.support.browser import requests_of
from tests.support.served import Served
from tests.support.service import ADMIN, ADMIN_TOKEN

SCREENSHOTS = os.environ.get("LOYALTY_DOCS_SCREENSHOTS")
OPERATIONS_JS = """els => els.map(e => [
  e.querySelector('.opblock-summary-method').textContent.toLowerCase(),
  e.querySelector('.opblock-summary-path').getAttribute('data-path'),
])"""
METHODS = {"get", "post", "put", "patch", "delete"}


def operations_of(document: dict[str, Any]) -> list[tuple[str, str]]:
    return sorted((m, p) for p, item in document["paths"].items() for m in item if m in METHODS)


async def listed_operations(page: Page) -> list[tuple[str, str]]:
    await page.wait_for_selector(".opblock", timeout=30_000)
    return sorted((m, p) for m, p in await page.eval_on_selector_all(".opblock", OPERATIONS_JS))


def only_the_service_asked(page: Page, served: Served) -> None:
    asked = requests_of(page)
    assert asked
    assert [url for url in asked if not url.startswith(served.url + "/")] == []


async def keep_screenshot(page: Page, name: str) -> None:
    if SCREENSHOTS:  # Playwright makes the folder
        await page.screenshot(path=str(Path(SCREENSHOTS) / name))


async def test_public_page_lists_every_operation_of_the_document(page: Page, served: Served) -> None:
    async with httpx.AsyncClient(base_url=served.url) as anyone:
        document = (await anyone.get("/api/v1/openapi.json")).json()
    assert document["openapi"] == "3.1.0"
    await page.goto(f"{served.url}/api/v1/docs")
    assert await listed_operations(page) == operations_of(document)
    assert await page.locator(".errors-wrapper").count() == 0
    assert await page.text_content(".info .title") is not None
    assert "Loyalty API" in (await page.text_content(".info .title") or "")
    await keep_screenshot(page, "api-docs.png")
    only_the_service_asked(page, served)


async def test_try_it_out_lists_rewards_with_the_client_credentials(page: Page, served: Served) -> None:
    """ "Authorize" takes a till's client id and secret (the page asks /oauth/token for the token);
    "Try it out" on GET /api/v1/rewards then answers 200 in the page."""
    async with httpx.AsyncClient(base_url=served.url, headers=ADMIN) as admin:
        plan = (await admin.post("/admin/v1/plans", json={"name": "docs page plan"})).json()["data"]
        vendor = (await admin.post("/admin/v1/vendors", json={"name": "docs page shop", "plan_id": plan["id"]})).json()
        made = await admin.post(f"/admin/v1/vendors/{vendor['data']['id']}/clients", json={"name": "till"})
        assert made.status_code == 201, made.text
        client = made.json()["data"]
    await page.goto(f"{served.url}/api/v1/docs")
    await page.wait_for_selector(".opblock", timeout=30_000)

    await page.click(".auth-wrapper .btn.authorize")
    await page.fill(".dialog-ux input[data-name=clientId]", client["client_id"])
    await page.fill(".dialog-ux input[data-name=clientSecret]", client["client_secret"])
    await page.click(".dialog-ux .auth-btn-wrapper .btn.authorize")
    await page.wait_for_selector(".dialog-ux .auth-btn-wrapper button:has-text('Logout')", timeout=10_000)
    await page.click(".dialog-ux .btn-done")

    operation = page.locator("#operations-rewards-listRewards")
    await operation.locator(".opblock-summary-control").click()
    await operation.locator(".try-out__btn").click()
    await operation.locator(".execute").click()
    status = operation.locator(".live-responses-table .response .response-col_status")
    await status.wait_for(timeout=10_000)
    assert (await status.text_content() or "").strip() == "200"
    body = await operation.locator(".live-responses-table .response-col_description pre").first.text_content()
    assert '"data": []' in (body or "")
    only_the_service_asked(page, served)
    assert f"{served.url}/oauth/token" in requests_of(page)


async def test_admin_page_asks_for_the_token_before_it_shows_anything(page: Page, served: Served) -> None:
    async with httpx.AsyncClient(base_url=served.url, headers=ADMIN) as admin:
        document = (await admin.get("/admin/v1/openapi.json")).json()
    await page.goto(f"{served.url}/admin/v1/docs")
    await page.wait_for_selector("#admin-token")
    assert await page.locator(".opblock").count() == 0
    assert await page.locator("#ui").inner_text() == ""
    assert not any("/admin/v1/openapi.json" in url for url in requests_of(page))
    await keep_screenshot(page, "admin-docs-token.png")

    await page.fill("#admin-token", ADMIN_TOKEN)
    # the submit renders the whole admin document in the page's own thread, which on a busy machine
    # outlasts the click's wait for navigations; the operations' wait below is the one that counts
    await page.click("#token button[type=submit]", no_wait_after=True)
    assert await listed_operations(page) == operations_of(document)
    assert await page.locator("#admin-token").is_hidden()
    await keep_screenshot(page, "admin-docs.png")

    # the token also authorizes "Try it out"
    operation = page.locator("#operations-plans-createPlan")
    await operation.locator(".opblock-summary-control").click()
    await operation.locator(".try-out__btn").click()
    await operation.locator("textarea.body-param__text").fill('{"name": "made in the docs page"}')
    await operation.locator(".execute").click()
    status = operation.locator(".live-responses-table .response .response-col_status")
    await status.wait_for(timeout=10_000)
    assert (await status.text_content() or "").strip() == "201"
    only_the_service_asked(page, served)


async def test_admin_page_with_a_wrong_token_shows_no_operation(page: Page, served: Served) -> None:
    await page.goto(f"{served.url}/admin/v1/docs")
    await page.fill("#admin-token", "not-the-admin-token-but-long-enough-to-pass")
    await page.click("#token button[type=submit]")
    await page.wait_for_function("document.querySelector('#ui').innerText.includes('Failed to load')", timeout=30_000)
    assert await page.locator(".opblock").count() == 0
    only_the_service_asked(page, served)
