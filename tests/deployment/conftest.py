"""The multi-process tests: a deployment of deploy/Procfile per test (tests/support/deployment.py).
A test module overrides ``deployment_env`` to give the processes settings of its own (an SMTP
server it started, say)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.deployment import Deployment


@pytest.fixture
def deployment_env() -> dict[str, str]:
    return {}


@pytest.fixture
def deployment(tmp_path: Path, deployment_env: dict[str, str]) -> Iterator[Deployment]:
    made = Deployment(tmp_path / "home", env=deployment_env)
    try:
        made.up()
        yield made
    finally:
        made.down()


@pytest.fixture
async def clients(deployment: Deployment) -> AsyncIterator[list[httpx.AsyncClient]]:
    """An HTTP client per API process of the deployment."""
    made = [httpx.AsyncClient(base_url=url, timeout=30) for url in deployment.urls]
    try:
        yield made
    finally:
        for client in made:
            await client.aclose()
