"""PORTAL-6: digits of other scripts (``²``, ``٣``) in a portal route's ids, query and form fields are
read as the API reads them (core's ``numbers``): a 4xx or a form's refusal, never a 500; an import
file holding them is refused row by row, and an upload whose check fails leaves nothing on disk."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_api.settings import Settings
from loyalty_core.accounts.jobs.imports import ImportJobs
from tests.support.portal import job_of, keyed, make_shop, signed_in, upload
from tests.support.portal_sweep import CASES, owner_world

DIGITS = ("²", "٣", "１２")
TEMPLATES = Path(__file__).resolve().parents[2] / "packages/loyalty_portal/src/loyalty_portal/templates"
FIELDS = sorted(
    set(re.findall(r'name="(\w+)"', "".join(p.read_text(encoding="utf-8") for p in TEMPLATES.glob("*.html"))))
    - {"csrf_token"}
)
"""Every field of every portal form: each route is sent all of them, its own among them."""
NUMBERS = re.compile(r"(?<=/)[0-9]+(?=/|$|\?)")


def with_digits(path: str, digits: str) -> str:
    """The route's path with each id segment spelt in ``digits`` instead."""
    return NUMBERS.sub(quote(digits, safe=""), path)


def acting_last(key: str) -> tuple[bool, str]:
    """Routes that end what the others need (anonymize, deactivate, delete, revoke) come last."""
    return key.endswith(("/anonymize", "/deactivate", "/delete", "/revoke")), key


async def test_no_route_answers_500_on_digits_of_other_scripts(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    shop = await make_shop(client, with_staff=False)
    world = await owner_world(client, engine, shop)
    csrf = await signed_in(client, shop.owner)
    failures = []
    for key in sorted(CASES, key=acting_last):
        method, _ = key.split(" ", 1)
        path = CASES[key].path(world)
        for digits in DIGITS:
            for target in (with_digits(path, digits), path):
                if method == "GET":
                    separator = "&" if "?" in target else "?"
                    query = "&".join(f"{n}={quote(digits)}" for n in FIELDS)
                    answer = await client.get(target + separator + query)
                else:
                    answer = await client.post(target, data={**dict.fromkeys(FIELDS, digits), **keyed(csrf)})
                if answer.status_code >= 500:
                    failures.append(f"{method} {target} with {digits}: {answer.status_code}")
    assert failures == []


async def test_an_import_file_with_such_digits_is_refused_row_by_row(client: AsyncTestClient[Litestar]) -> None:
    shop = await make_shop(client, with_staff=False)
    csrf = await signed_in(client, shop.owner)
    checked = await upload(client, csrf, "external_id,opening_points\r\na-1,²\r\na-2,٣\r\na-3,7\r\n")
    assert checked.status_code == 303, checked.text
    page = await client.get(f"/portal/import/{await job_of(checked)}")
    assert '<span id="rows-accepted">1</span> rows accepted, <span id="rows-refused">2</span> rows refused' in page.text
    for line in (1, 2):
        assert f"<td>{line}</td><td>opening_points is not a whole number from 0 to 2147483647.</td>" in page.text


async def test_an_upload_whose_check_fails_leaves_nothing_on_disk(
    client: AsyncTestClient[Litestar], settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    shop = await make_shop(client, with_staff=False)
    csrf = await signed_in(client, shop.owner)
    folder = settings.home / "imports"
    refused = await upload(client, csrf, "nonsense\r\n1\r\n")
    assert refused.status_code == 422
    assert "Unknown column &#39;nonsense&#39;" in refused.text

    async def crashing(*_: object, **__: object) -> None:
        raise RuntimeError("the check crashed")

    monkeypatch.setattr(ImportJobs, "checked", crashing)
    crashed = await upload(client, csrf, "external_id\r\nx-1\r\n")
    assert crashed.status_code == 500
    assert sorted(p.name for p in folder.glob(f"{shop.vendor_id}-*")) == []
