"""A1 for the back office on the deployment: every operation of the admin document, positive and
negative data with the admin token, a fixed seed and few examples per operation, against an API
process of deploy/Procfile: zero 5xx and every answer valid against the document."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from schemathesis import GenerationMode

from tests.api import test_fuzz_public as fuzz
from tests.deployment.test_fuzz import UNLIMITED
from tests.support.deployment import Deployment


@pytest.fixture(scope="module")
def admin_served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, dict[str, str]]]:
    """The admin document as the first API process serves it (it needs the token), and the token."""
    deployment = Deployment(Path(tmp_path_factory.mktemp("fuzz-admin")) / "home", env=UNLIMITED)
    try:
        deployment.up()
        admin = {"Authorization": f"Bearer {deployment.admin_token}"}
        document = httpx.get(f"{deployment.urls[0]}/admin/v1/openapi.json", headers=admin, timeout=30).json()
        schema = schemathesis.openapi.from_dict(document)
        schema.config.update(base_url=deployment.urls[0])
        schema.config.generation.update(codec="utf-8")
        yield schema, admin
    finally:
        deployment.down()


def test_admin_operations_answer_as_documented(admin_served: tuple[Any, dict[str, str]]) -> None:
    schema, admin = admin_served
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) > 20
    failures = [
        failure
        for operation in operations
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
        if (failure := fuzz._fuzz(operation, mode, admin)) is not None
    ]
    Path(os.environ.get("LOYALTY_FUZZ_REPORT", os.devnull)).write_text("\n\n".join(failures))
    assert failures == [], "\n\n".join(failures)
