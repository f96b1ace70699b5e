"""A real browser for the tests of pages: Debian's Chromium (``apt-get install chromium``) driven by
Playwright, which never downloads a browser of its own here.

One browser per test session, a fresh context (cookies, storage, cache) per test. Every request the
page makes is recorded (``requests_of(page)``) so a test can assert the page asked no other host. A
test that fails leaves a full-page screenshot in ``SCREENSHOTS`` (``LOYALTY_TEST_SCREENSHOTS`` or
``.loyalty/test-screenshots``); the folder's path is logged when the session starts and with each
screenshot. Import the fixtures into a suite's conftest.py to use them.
"""

from __future__ import annotations

import logging
import os
import re
import weakref
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, BrowserContext, Page, async_playwright

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("LOYALTY_TEST_CHROMIUM", "/usr/bin/chromium"))
SCREENSHOTS = Path(os.environ.get("LOYALTY_TEST_SCREENSHOTS", ROOT / ".loyalty" / "test-screenshots"))
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
log = logging.getLogger("tests.browser")
_failed = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Marks a test whose call failed, for the page fixture's screenshot."""
    report = yield
    if getattr(report, "when", "") == "call" and getattr(report, "failed", False):
        item.stash[_failed] = True
    return report


@pytest.fixture(scope="session")
def chromium() -> Path:
    if not CHROMIUM.exists():
        raise RuntimeError(f"no Chromium at {CHROMIUM}: apt-get install chromium (or set LOYALTY_TEST_CHROMIUM)")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return CHROMIUM


@pytest.fixture(scope="session")
async def browser(chromium: Path) -> AsyncIterator[Browser]:
    log.warning("browser tests: screenshots of failed tests go to %s", SCREENSHOTS)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(chromium), args=ARGS, headless=True)
        yield browser
        await browser.close()


@pytest.fixture
async def context(browser: Browser) -> AsyncIterator[BrowserContext]:
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    yield context
    await context.close()


# each page's requests, kept beside the page: Playwright's ``Page.requests`` is a method of its own
_requested: weakref.WeakKeyDictionary[Page, list[str]] = weakref.WeakKeyDictionary()


@pytest.fixture
async def page(context: BrowserContext, request: pytest.FixtureRequest) -> AsyncIterator[Page]:
    page = await context.new_page()
    page.set_default_timeout(10_000)
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    _requested[page] = requested
    yield page
    if request.node.stash.get(_failed, False):
        shot = SCREENSHOTS / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', request.node.nodeid)}.png"
        await page.screenshot(path=str(shot), full_page=True)
        log.warning("browser tests: %s failed; its screenshot is %s", request.node.nodeid, shot)
        print(f"\nscreenshot of the failed page: {shot}")


def requests_of(page: Page) -> list[str]:
    """Every URL the page asked for since it opened (documents, scripts, fetches, images)."""
    return list(_requested.get(page, []))
