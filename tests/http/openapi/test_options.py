"""OPTIONS answers (FAULT-4: a schema fuzzer saw ``OPTIONS /api/v1/products`` answer
``Allow: OPTIONS, POST`` although the path also takes GET)."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient


@pytest.mark.parametrize(
    ("path", "allow"),
    [
        ("/api/v1/products", "GET, OPTIONS, POST"),
        ("/api/v1/products/A-1", "DELETE, GET, OPTIONS, PATCH, PUT"),
        ("/api/v1/customers", "OPTIONS, POST"),
    ],
)
async def test_options_lists_every_method_of_the_path_without_a_token(
    client: AsyncTestClient[Litestar], path: str, allow: str
) -> None:
    """RFC 9110 9.3.7: Allow names every method the path takes; OPTIONS shows no data, so no token."""
    response = await client.options(path)
    assert response.status_code == 204
    assert response.headers["allow"] == allow
