"""Printable sheets of card labels as a PDF, built with fpdf2 a sheet at a time (BATCH-2, BATCH-3).

Sheets of 3 x 8 labels (70 x 37 mm on 210 x 297 mm paper, a common label sheet); each label holds the
card's code as a QR code, the code as text and the shop's name above it. The QR modules are drawn as
filled rectangles (sharp at any printer resolution), one per run of dark modules in a row. The text is
set in DejaVu Sans Mono, vendored beside this module with its licence and embedded as a subset of the
glyphs used: its zero is dotted and its one, capital I and capital L differ, so a cashier typing a
printed code does not mistake one for another (BATCH-3).

A writer takes its sheets one ``page(codes)`` call at a time (the download draws each off the event
loop, one at a time per process) and answers the document's bytes at ``finish()``.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.resources import files
from typing import Final

import segno
from fpdf import FPDF
from fpdf.fonts import TTFFont

FONT_FILE: Final = files("loyalty_portal").joinpath("fonts", "DejaVuSansMono.ttf")
"""The printed codes' font: DejaVu Sans Mono (Bitstream Vera licence, ``fonts/LICENSE-DejaVu.txt``)."""
FONT: Final = "DejaVuSansMono"

PAGE_WIDTH, PAGE_HEIGHT = 595.28, 841.89
"""210 x 297 mm in points."""
COLUMNS, ROWS = 3, 8
PER_PAGE = COLUMNS * ROWS
LABEL_WIDTH, LABEL_HEIGHT = PAGE_WIDTH / COLUMNS, PAGE_HEIGHT / ROWS
MODULE = 3.0
"""Points per QR module: a version 1 code (21 modules) is 63 points, 22 mm, wide."""
QUIET = 4
"""The quiet zone around a QR code, in modules, as the QR standard asks."""
QR_SIZE = 21
FONT_SIZE = 14
"""The code's size in points: eight characters take 67 of the label's 111 points beside the QR code."""
NAME_SIZE, SMALLEST_NAME_SIZE = 8.0, 5.0
"""The shop name's size in points, shrunk down to the smallest for a long name, then shortened."""
QR_ERROR = "h"
"""The highest error correction: 8 letters and digits still fit version 1, and a scuffed card scans."""

TEXT_LEFT = (QUIET + QR_SIZE + QUIET) * MODULE
"""Where the label's text starts, from the label's left edge: after the QR code and its quiet zone."""
TEXT_WIDTH = LABEL_WIDTH - TEXT_LEFT - QUIET * MODULE


def qr_matrix(code: str) -> tuple[bytearray, ...]:
    """The QR modules of ``code`` (rows of 0 and 1, without the quiet zone)."""
    return tuple(segno.make_qr(code, error=QR_ERROR).matrix)


def runs(row: Sequence[int]) -> list[tuple[int, int]]:
    """(start, length) of each run of dark modules in a row."""
    found, start = [], None
    for column, dark in enumerate([*row, 0]):
        if dark and start is None:
            start = column
        elif not dark and start is not None:
            found.append((start, column - start))
            start = None
    return found


class SheetWriter:
    """One PDF of label sheets for one shop: ``page(codes)`` per sheet, then ``finish()`` for the bytes."""

    def __init__(self, shop_name: str) -> None:
        self._pdf = pdf = FPDF(unit="pt", format=(PAGE_WIDTH, PAGE_HEIGHT))
        pdf.set_auto_page_break(False)
        pdf.set_margin(0)
        pdf.set_creator("Loyalty portal")
        pdf.add_font(FONT, fname=str(FONT_FILE))
        pdf.set_font(FONT, size=FONT_SIZE)
        self.name, self.name_size = self._fitted(" ".join(shop_name.split()))

    def _fitted(self, name: str) -> tuple[str, float]:
        """The shop's name and its size so that it fits beside the QR code on one line: shrunk to the
        smallest size, then shortened with an ellipsis."""
        pdf, size = self._pdf, NAME_SIZE
        pdf.set_font_size(size)
        while pdf.get_string_width(name) > TEXT_WIDTH and size > SMALLEST_NAME_SIZE:
            size -= 0.5
            pdf.set_font_size(size)
        if pdf.get_string_width(name) > TEXT_WIDTH:
            while name and pdf.get_string_width(name + "…") > TEXT_WIDTH:
                name = name[:-1]
            name = name.rstrip() + "…"
        return name, size

    def _label(self, code: str, slot: int) -> None:
        pdf = self._pdf
        left = (slot % COLUMNS) * LABEL_WIDTH
        top = (slot // COLUMNS) * LABEL_HEIGHT
        qr_left = left + QUIET * MODULE
        qr_top = top + (LABEL_HEIGHT - QR_SIZE * MODULE) / 2
        for r, row in enumerate(qr_matrix(code)):
            for start, length in runs(row):
                pdf.rect(qr_left + start * MODULE, qr_top + r * MODULE, length * MODULE, MODULE, style="F")
        middle = top + LABEL_HEIGHT / 2
        if self.name:
            pdf.set_font_size(self.name_size)
            pdf.text(left + TEXT_LEFT, middle - FONT_SIZE / 2, self.name)
        pdf.set_font_size(FONT_SIZE)
        pdf.text(left + TEXT_LEFT, middle + FONT_SIZE / 2, code)

    def page(self, codes: Sequence[str]) -> None:
        """One sheet with up to ``PER_PAGE`` labels, filled row by row from the top left."""
        if len(codes) > PER_PAGE:
            raise ValueError(f"a sheet holds {PER_PAGE} labels")
        self._pdf.add_page()
        for slot, code in enumerate(codes):
            self._label(code, slot)

    def finish(self) -> bytes:
        """The whole document; an empty batch gets one blank sheet. The writer is closed after it."""
        try:
            if self._pdf.page == 0:
                self._pdf.add_page()
            return bytes(self._pdf.output())
        finally:
            self.close()

    def close(self) -> None:
        """Close the font file fpdf2 reads glyphs from (a download stopped half way closes it too)."""
        for font in self._pdf.fonts.values():
            if isinstance(font, TTFFont):
                font.close()
