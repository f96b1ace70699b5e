"""A1 on the deployment: the schemathesis runs of tests/api/test_fuzz_public.py (every public
operation with positive and negative data, then stateful runs over the document's links; fixed
seed, bounded examples) against an API process of deploy/Procfile, beside the second API process
and the job worker, on the shared Redis: zero 5xx, every answer valid against the document."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api import test_fuzz_public as fuzz
from tests.deployment.shop import open_shop
from tests.support.deployment import Deployment

public_document = fuzz.public_document
"""The public document as the deployment serves it (the fixture of tests/api, over ``served`` here)."""

UNLIMITED = {"LOYALTY_ANON_RATE_PER_MINUTE": "1000000", "LOYALTY_MAX_RATE_PER_MINUTE": "1000000"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """The first API process of a deployment, and a vendor token on a plan without a rate ceiling."""
    deployment = Deployment(Path(tmp_path_factory.mktemp("fuzz")) / "home", env=UNLIMITED)
    try:
        deployment.up()

        async def shop_headers() -> dict[str, str]:
            async with httpx.AsyncClient(base_url=deployment.urls[0], timeout=30) as client:
                return (await open_shop(client, deployment.admin_token)).headers

        yield deployment.urls[0], asyncio.run(shop_headers())
    finally:
        deployment.down()


# the same runs as tests/api, in the same order: the stateful run after the stateless one, whose
# writes (products, customers) give the links' targets something to find
def test_public_operations_answer_as_documented(public_document: Any, served: tuple[str, dict[str, str]]) -> None:
    fuzz.test_public_operations_answer_as_documented(public_document, served)


def test_public_api_statefully(public_document: Any, served: tuple[str, dict[str, str]]) -> None:
    fuzz.test_public_api_statefully(public_document, served)
