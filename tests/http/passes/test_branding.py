"""The admin API's pass branding (PASS-1, PASS-2): a shop's colours and name, set and read; bad input
refused with the error envelope (INPUT-1, INPUT-15), never a 5xx (found by fuzzing: text that is
not base64 for an image). Images are judged by the service's pass maker, so their checks are tested
with the composed service (tests/api/passes/test_branding_upload.py)."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.app import ADMIN
from tests.support.envelope import details_of, error_of
from tests.support.tenants import make_tenant


def branding_of(vendor_id: int | str) -> str:
    return f"/admin/v1/vendors/{vendor_id}/pass-branding"


async def test_branding_is_set_and_read_back(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    body = {"display_name": "Bakkerij Jansen", "background": "#1D1D1F", "label": "#aabbcc"}
    response = await client.put(branding_of(tenant.vendor_id), json=body, headers=ADMIN)
    assert response.status_code == 200, response.text
    read = await client.get(branding_of(tenant.vendor_id), headers=ADMIN)
    assert read.status_code == 200
    data = read.json()["data"]
    assert data == response.json()["data"]
    assert (data["shop_name"], data["background"], data["label"], data["has_logo"], data["has_icon"]) == (
        "Bakkerij Jansen",
        "#1D1D1F",
        "#aabbcc",
        False,
        False,
    )


async def test_a_body_without_images_needs_no_pass_maker(client: AsyncTestClient[Litestar]) -> None:
    """This app is composed without the service's pass maker: only an image asks for it, so a null
    image (none) and a null name (the shop's own) are stored as they are."""
    tenant = await make_tenant(client)
    vendor = (await client.get(f"/admin/v1/vendors/{tenant.vendor_id}", headers=ADMIN)).json()["data"]
    body = {"display_name": None, "logo_png": None, "icon_png": None, "foreground": "#010203"}
    response = await client.put(branding_of(tenant.vendor_id), json=body, headers=ADMIN)
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert (data["shop_name"], data["foreground"], data["has_logo"], data["has_icon"]) == (
        vendor["name"],
        "#010203",
        False,
        False,
    )


async def test_an_image_that_is_not_base64_is_a_validation_error(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    for image in ("\u0082\u009f\u0095", "not base64!", "YWJj="):
        response = await client.put(branding_of(tenant.vendor_id), json={"logo_png": image}, headers=ADMIN)
        assert details_of(response) == {"logo_png": ["The value must be base64-encoded."]}, image
    response = await client.put(branding_of(tenant.vendor_id), json={"icon_png": 42, "label": "red"}, headers=ADMIN)
    assert set(details_of(response)) == {"icon_png", "label"}


async def test_an_unknown_vendor_is_vendor_not_found(client: AsyncTestClient[Litestar]) -> None:
    for vendor in ("999999999", "%C2%AEs%C3%B7"):
        response = await client.put(branding_of(vendor), json={"logo_png": "\u0082"}, headers=ADMIN)
        assert (response.status_code, error_of(response)["code"]) in (
            (404, "VENDOR_NOT_FOUND"),
            (422, "VALIDATION_ERROR"),
        )
