"""The card description: what a pass shows, checked before any builder sees it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from loyalty_wallet_pass.card import PassBranding, PassCard, Rgb
from loyalty_wallet_pass.errors import InvalidCard, InvalidImage
from loyalty_wallet_pass.images import check_png, default_icon, encode_png

BASE = PassCard(
    serial_number="v1-c1",
    card_code="AB12CD34",
    holder_name="Ann",
    balance=10,
    branding=PassBranding(shop_name="Shop"),
    program_id="v1",
)


def card(**changes: Any) -> PassCard:
    return replace(BASE, **changes)


@pytest.mark.parametrize("code", ["ABC123", "abcd1234", "ABCD-123", "ABCD12345"])
def test_card_code_must_be_eight_of_a_to_z_and_digits(code: str) -> None:
    with pytest.raises(InvalidCard, match="card code"):
        card(card_code=code)


@pytest.mark.parametrize("field", ["serial_number", "program_id"])
@pytest.mark.parametrize("value", ["", "has space", "slash/es", "x" * 101])
def test_identifiers_must_suit_both_platforms(field: str, value: str) -> None:
    with pytest.raises(InvalidCard):
        card(**{field: value})


def test_a_valid_card_shows_its_code_as_qr_message() -> None:
    made = card()
    assert made.balance == 10
    assert (made.barcode.message, made.barcode.alt_text) == ("AB12CD34", "AB12CD34")


def test_colours_read_hex_and_write_both_platform_forms() -> None:
    colour = Rgb.from_hex("#1A2b3C")
    assert colour == Rgb(26, 43, 60)
    assert colour.css() == "rgb(26, 43, 60)"
    assert colour.hex() == "#1a2b3c"


@pytest.mark.parametrize("text", ["1a2b3c", "#1a2b3", "#1a2b3cd", "#gg0000", "red"])
def test_colour_must_be_hash_and_six_hex_digits(text: str) -> None:
    with pytest.raises(InvalidCard, match="#rrggbb"):
        Rgb.from_hex(text)


def test_colour_part_outside_a_byte_is_refused() -> None:
    with pytest.raises(InvalidCard):
        Rgb(0, 256, 0)


def test_branding_needs_a_shop_name() -> None:
    with pytest.raises(InvalidCard, match="name"):
        PassBranding(shop_name="  ")


def test_branding_refuses_an_image_that_is_no_png() -> None:
    with pytest.raises(InvalidImage, match="logo image is not a PNG"):
        PassBranding(shop_name="Shop", logo_png=b"GIF89a" + bytes(40))


def test_branding_refuses_an_oversized_image() -> None:
    huge = encode_png(1025, 1, bytes(1025 * 4))
    with pytest.raises(InvalidImage, match="1025x1"):
        PassBranding(shop_name="Shop", icon_png=huge)


def test_default_icon_is_a_png_of_the_size_asked() -> None:
    icon = default_icon(58, (0, 0, 0), (255, 255, 255))
    assert check_png(icon, what="icon") == (58, 58)


def test_branding_refuses_a_damaged_png() -> None:
    """Hostile input: a cut or altered upload is refused, not shown blank in the wallet."""
    good = encode_png(4, 4, bytes(64))
    altered = bytearray(good)
    altered[-20] ^= 0x01
    for damaged in (good[:-12], bytes(altered)):
        with pytest.raises(InvalidImage, match="damaged PNG"):
            PassBranding(shop_name="Shop", icon_png=damaged)
    with pytest.raises(InvalidImage, match="not a PNG"):
        PassBranding(shop_name="Shop", icon_png=good[:8] + good[33:])
