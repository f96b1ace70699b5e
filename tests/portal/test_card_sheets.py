"""The card sheet PDF itself, read back: every label names the shop, long and foreign names fit their
line, and the codes are set in the embedded DejaVu Sans Mono whose zero, one, I and L differ
(BATCH-2, BATCH-3)."""

from __future__ import annotations

import re
from importlib.resources import files

import pytest

from loyalty_portal.card_sheets import FONT_FILE, NAME_SIZE, PER_PAGE, SMALLEST_NAME_SIZE, SheetWriter
from tests.support.pdf_labels import label_fonts, labels, qr_of

LOOK_ALIKES = ["0O0O0O0O", "1IL1IL1I", "O0I1L0O1"]


def written(shop: str, *sheets: list[str]) -> bytes:
    writer = SheetWriter(shop)
    for codes in sheets:
        writer.page(codes)
    return writer.finish()


def test_each_label_names_the_shop_beside_its_code_in_an_embedded_font() -> None:
    """BATCH-3: two sheets, every label with the shop's name (parentheses, backslash and accents kept)
    above its code; the codes, look-alikes included, read back exactly from the embedded font's
    glyphs, which is DejaVu Sans Mono subset into the file."""
    codes = [*LOOK_ALIKES, *(f"AB{n:04d}CD" for n in range(PER_PAGE))]
    pdf = written("Café (Süd) \\ Noord", codes[:PER_PAGE], codes[PER_PAGE:])
    sheets = labels(pdf)
    assert [len(sheet) for sheet in sheets] == [PER_PAGE, 3]
    assert [label.code for sheet in sheets for label in sheet] == codes
    for sheet in sheets:
        for label in sheet:
            assert label.shop == "Café (Süd) \\ Noord"
            assert label.modules == qr_of(label.code)
            assert label.code_size == 14
    [font] = label_fonts(pdf)
    assert re.fullmatch(r"[A-Z]{6}\+DejaVuSansMono\w*\+embedded", font), font
    # subset: the file holds the glyphs used, not the whole 340 kB font
    assert len(pdf) < 60_000


def test_the_font_is_vendored_with_its_licence() -> None:
    """BATCH-3: the font travels with the package (CI machines may lack fonts-dejavu-core)."""
    assert FONT_FILE.is_file()
    licence = files("loyalty_portal").joinpath("fonts", "LICENSE-DejaVu.txt").read_text()
    assert "Bitstream" in licence
    assert "Permission is hereby granted" in licence


@pytest.mark.parametrize(
    ("shop", "shown"),
    [
        ("Bakery", "Bakery"),
        ("  Two   spaces\tand a tab ", "Two spaces and a tab"),
        ("", ""),
    ],
)
def test_the_name_is_printed_as_given_on_one_line(shop: str, shown: str) -> None:
    """BATCH-3"""
    [[label]] = labels(written(shop, ["CARD0001"]))
    assert (label.shop, label.code) == (shown, "CARD0001")


def test_a_long_name_shrinks_then_ends_in_an_ellipsis() -> None:
    """BATCH-3: a name too wide beside the QR code is set smaller, down to the smallest size, then
    shortened with an ellipsis; the code keeps its size."""
    medium = "Bakkerij de Gouden Korenschoof"
    writer = SheetWriter(medium)
    assert writer.name == medium
    assert SMALLEST_NAME_SIZE <= writer.name_size < NAME_SIZE
    writer.close()
    very_long = "The very long name of a shop that would never fit on a label of seventy millimetres"
    [[label]] = labels(written(very_long, ["CARD0001"]))
    assert label.shop.endswith("…")
    assert very_long.startswith(label.shop[:-1])
    assert label.code == "CARD0001"
    assert label.code_size == 14


def test_a_name_outside_the_font_and_an_empty_batch_still_print() -> None:
    """BATCH-2, BATCH-3: glyphs the font lacks never stop the download; an empty batch is one blank sheet."""
    [[label]] = labels(written("東京 Bakery", ["CARD0001"]))
    assert label.code == "CARD0001"
    assert "Bakery" in label.shop
    assert labels(written("Bakery")) == [[]]
