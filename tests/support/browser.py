"""Browser fixtures: Debian's Chromium (``/usr/bin/chromium``, installed with apt) driven by
Playwright, one browser per session and a fresh context per test. Playwright's async API, in the
session's event loop: its sync API runs a loop of its own in the main thread, which stops every
async test that follows it in the same session. A failed test leaves a screenshot
of its page in ``LOYALTY_SCREENSHOT_DIR`` (default ``.loyalty/screenshots``), whose path the log
names."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, async_playwright

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
FAILED = pytest.StashKey[bool]()


def screenshot_dir() -> Path:
    return Path(os.environ.get("LOYALTY_SCREENSHOT_DIR") or ROOT / ".loyalty" / "screenshots")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> object:
    report = yield
    if getattr(report, "when", "") == "call" and getattr(report, "failed", False):
        item.stash[FAILED] = True
    return report


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        await launched.close()


@pytest.fixture
async def page(browser: Browser, request: pytest.FixtureRequest) -> AsyncIterator[Page]:
    context = await browser.new_context()
    opened = await context.new_page()
    opened.set_default_timeout(10_000)
    yield opened
    if request.node.stash.get(FAILED, False):
        folder = screenshot_dir()
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / (re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.nodeid) + ".png")
        await opened.screenshot(path=str(path), full_page=True)
        print(f"\nbrowser: screenshot of the failed test's page written to {path}", file=sys.stderr)
    await context.close()
