"""FAULT-4 on the deployment: schemathesis over the public document (every operation with positive and
negative data, then stateful runs over the document's links; fixed seed, bounded examples) against
an API process of deploy/Procfile, beside the second API process and the job worker, on the shared
Redis; and over every admin operation with the admin token. Zero 5xx, every answer valid against
its document."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import schemathesis

from tests.deployment.shop import open_shop
from tests.support import fuzzing
from tests.support.deployment import UNLIMITED, Deployment


@pytest.fixture(scope="module")
def deployment_of_fuzz(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    deployment = Deployment(Path(tmp_path_factory.mktemp("fuzz")) / "home", env=UNLIMITED)
    try:
        deployment.up()
        yield deployment
    finally:
        deployment.down()


def _report(failures: list[str]) -> None:
    Path(os.environ.get("LOYALTY_FUZZ_REPORT", os.devnull)).write_text("\n\n".join(failures))


def test_public_operations_then_links_answer_as_documented(deployment_of_fuzz: Deployment) -> None:
    """The stateful run follows the stateless one, whose writes (products, customers) give the
    links' targets something to find, as in tests/api."""
    base = deployment_of_fuzz.urls[0]

    async def shop_headers() -> dict[str, str]:
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            return (await open_shop(client, deployment_of_fuzz.admin_token)).headers

    vendor = asyncio.run(shop_headers())
    schema = fuzzing.document(base)
    count, failures = fuzzing.failures(schema, vendor)
    _report(failures)
    assert count > 20
    assert failures == [], "\n\n".join(failures)
    fuzzing.run_statefully(schema, vendor)


def test_admin_operations_answer_as_documented(deployment_of_fuzz: Deployment) -> None:
    """The back office's document needs the admin token to read, so it is fetched and handed over."""
    base = deployment_of_fuzz.urls[0]
    admin = {"Authorization": f"Bearer {deployment_of_fuzz.admin_token}"}
    read = httpx.get(f"{base}/admin/v1/openapi.json", headers=admin, timeout=30).json()
    count, failures = fuzzing.failures(fuzzing.prepared(schemathesis.openapi.from_dict(read), base), admin)
    _report(failures)
    assert count > 20
    assert failures == [], "\n\n".join(failures)
