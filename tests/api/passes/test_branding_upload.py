"""PUT /admin/v1/vendors/{vendor_id}/pass-branding with images, through the composed service: the
HTTP layer hands each image to the service's pass maker, which judges it by the rules it builds
passes with (PASS-1, PASS-2), so an image no wallet can show is refused at upload (INPUT-1,
INPUT-15) and the branding stays as it was."""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import AsyncIterator

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from loyalty_api.adapters.pass_platforms import WalletPasses, wallet_passes
from loyalty_api.app import create_app
from loyalty_api.settings import Settings
from loyalty_wallet_pass.identity import new_rsa_key, private_key_pem
from loyalty_wallet_pass.images import encode_png
from loyalty_wallet_pass.platform import LocalPassPlatform
from tests.support.app import ADMIN, ADMIN_TOKEN
from tests.support.envelope import details_of
from tests.support.tenants import make_tenant

Client = AsyncTestClient[Litestar]
GOOD = encode_png(4, 4, bytes(range(64)))
PNG = base64.b64encode(GOOD).decode()


def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_of(width: int, height: int, data: bytes, *, depth: int = 8, colour: int = 6) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0)
    return GOOD[:8] + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")


BAD_CRC = GOOD[:-20] + bytes([GOOD[-20] ^ 1]) + GOOD[-19:]
REFUSED = [
    (b"GIF89a\x01\x00\x01\x00\x00\x00\x00;", "Logo image is not a PNG."),
    (b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>', "Logo image is not a PNG."),
    (png_of(100_000, 100_000, zlib.compress(b"")), "Logo image is 100000x100000, outside 1-1024 pixels a side."),
    (BAD_CRC, "Logo image is a damaged PNG (chunk b'IDAT')."),
    (GOOD[:-12], "Logo image is a damaged PNG (no image data or end)."),
    (b"\x89PNG\r\n\x1a\n" + bytes(600_000), "Logo image is 600008 bytes, more than 524288."),
    (png_of(4, 4, b"not deflate data"), "Logo image is a damaged PNG (image data does not inflate)."),
    (png_of(5, 5, zlib.compress(bytes(4 * 17))), "Logo image is a damaged PNG (image data of the wrong size)."),
    (png_of(1, 1, zlib.compress(b"\x09" + bytes(4))), "Logo image is a damaged PNG (unknown row filter)."),
    (
        png_of(1, 1, zlib.compress(b"\x00\x00"), depth=3, colour=0),
        "Logo image is a PNG of a kind wallets do not read (colour type 0, depth 3).",
    ),
    (
        png_of(1, 1, zlib.compress(b"\x00\x00"), colour=3),
        "Logo image is a damaged PNG (palette image without a palette).",
    ),
]


@pytest.fixture(scope="module")
def passes(settings: Settings) -> WalletPasses:
    assert settings.encryption_key is not None
    return wallet_passes(settings.encryption_key, private_key_pem(new_rsa_key()), LocalPassPlatform())


@pytest.fixture
async def client(settings: Settings, passes: WalletPasses) -> AsyncIterator[Client]:
    own = msgspec.structs.replace(settings, admin_token=ADMIN_TOKEN, worker="external")
    async with AsyncTestClient(app=create_app(own, passes=passes)) as made:
        yield made


def branding_of(vendor_id: int) -> str:
    return f"/admin/v1/vendors/{vendor_id}/pass-branding"


async def test_a_good_png_is_stored_with_the_branding(client: Client) -> None:
    tenant = await make_tenant(client)
    body = {"display_name": "Bakkerij Jansen", "background": "#1D1D1F", "label": "#aabbcc", "logo_png": PNG}
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
        True,
        False,
    )
    icon = await client.put(branding_of(tenant.vendor_id), json={"icon_png": PNG}, headers=ADMIN)
    assert icon.status_code == 200, icon.text
    assert (icon.json()["data"]["has_logo"], icon.json()["data"]["has_icon"]) == (True, True)


@pytest.mark.parametrize(("image", "message"), REFUSED)
async def test_an_image_a_wallet_cannot_show_is_refused_at_upload(client: Client, image: bytes, message: str) -> None:
    """A PNG that decodes, at most 1,024 x 1,024 pixels and 512 KiB; anything else is 422
    VALIDATION_ERROR on the field and the branding stays as it was, so no pass build or card mail
    of the shop can fail on it."""
    tenant = await make_tenant(client)
    path = branding_of(tenant.vendor_id)
    assert (await client.put(path, json={"icon_png": PNG}, headers=ADMIN)).status_code == 200
    encoded = base64.b64encode(image).decode()
    response = await client.put(path, json={"logo_png": encoded, "display_name": "Changed"}, headers=ADMIN)
    assert details_of(response) == {"logo_png": [message]}
    assert response.json()["error"]["message"] == message
    icon = await client.put(path, json={"icon_png": encoded}, headers=ADMIN)
    assert details_of(icon) == {"icon_png": [message.replace("Logo", "Icon")]}
    data = (await client.get(path, headers=ADMIN)).json()["data"]
    assert (data["has_logo"], data["has_icon"], data["shop_name"] == "Changed") == (False, True, False)


async def test_both_images_refused_are_both_named_and_nothing_is_stored(client: Client) -> None:
    tenant = await make_tenant(client)
    path = branding_of(tenant.vendor_id)
    gif = base64.b64encode(REFUSED[0][0]).decode()
    body = {"logo_png": gif, "icon_png": gif, "background": "#000000"}
    response = await client.put(path, json=body, headers=ADMIN)
    assert details_of(response) == {"logo_png": ["Logo image is not a PNG."], "icon_png": ["Icon image is not a PNG."]}
    mixed = await client.put(path, json={"logo_png": PNG, "icon_png": gif}, headers=ADMIN)
    assert details_of(mixed) == {"icon_png": ["Icon image is not a PNG."]}
    data = (await client.get(path, headers=ADMIN)).json()["data"]
    assert (data["background"], data["has_logo"], data["has_icon"]) == ("#ffffff", False, False)


async def test_an_image_that_is_not_base64_is_refused_before_it_is_judged(client: Client) -> None:
    tenant = await make_tenant(client)
    path = branding_of(tenant.vendor_id)
    gif = base64.b64encode(REFUSED[0][0]).decode()
    for image in ("\u0082\u009f\u0095", "not base64!", "YWJj="):
        response = await client.put(path, json={"logo_png": image, "icon_png": gif}, headers=ADMIN)
        assert details_of(response) == {"logo_png": ["The value must be base64-encoded."]}, image
    data = (await client.get(path, headers=ADMIN)).json()["data"]
    assert (data["has_logo"], data["has_icon"]) == (False, False)
