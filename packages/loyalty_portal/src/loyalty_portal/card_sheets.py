"""Printable sheets of card labels as a PDF, written page by page (BATCH-2).

Sheets of 3 x 8 labels (70 x 37 mm on 210 x 297 mm paper, a common label sheet); each label holds the card's code as
a QR code and as text. The document is produced as it is sent: a page's bytes are written and
forgotten, and only the offsets the cross-reference table needs are kept, so a batch of 10,000
cards never sits in memory. The QR modules are drawn as filled rectangles (sharp at any printer
resolution), one rectangle per run of dark modules, in module units under a scaling transform.
Helvetica is one of the PDF standard fonts, so nothing is embedded.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import segno

PAGE_WIDTH, PAGE_HEIGHT = 595.28, 841.89
"""210 x 297 mm in points."""
COLUMNS, ROWS = 3, 8
PER_PAGE = COLUMNS * ROWS
LABEL_WIDTH, LABEL_HEIGHT = PAGE_WIDTH / COLUMNS, PAGE_HEIGHT / ROWS
MODULE = 3.0
"""Points per QR module: a version 1 code (21 modules) is 63 points, 22 mm, wide."""
QUIET = 4
"""The quiet zone around a QR code, in modules, as the QR standard asks."""
FONT_SIZE = 14
QR_ERROR = "h"
"""The highest error correction: 8 letters and digits still fit version 1, and a scuffed card scans."""

_CATALOG, _PAGES, _FONT = 1, 2, 3
_FIRST_PAGE_OBJECT = 4


def qr_matrix(code: str) -> tuple[bytearray, ...]:
    """The QR modules of ``code`` (rows of 0 and 1, without the quiet zone)."""
    return tuple(segno.make_qr(code, error=QR_ERROR).matrix)


def _runs(row: Sequence[int]) -> list[tuple[int, int]]:
    """(start, length) of each run of dark modules in a row."""
    runs, start = [], None
    for column, dark in enumerate([*row, 0]):
        if dark and start is None:
            start = column
        elif not dark and start is not None:
            runs.append((start, column - start))
            start = None
    return runs


def _text(value: str) -> str:
    return value.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def label(code: str, slot: int) -> str:
    """The drawing operators of one label in its slot of the page (0 top left, row by row)."""
    left = (slot % COLUMNS) * LABEL_WIDTH
    top = PAGE_HEIGHT - (slot // COLUMNS) * LABEL_HEIGHT
    qr_left = left + QUIET * MODULE
    qr_top = top - (LABEL_HEIGHT - 21 * MODULE) / 2
    rects = [
        f"{start} {-(r + 1)} {length} 1 re" for r, row in enumerate(qr_matrix(code)) for start, length in _runs(row)
    ]
    # the QR code in module units with its top left corner at the origin, y growing upwards
    drawn = f"q {MODULE:g} 0 0 {MODULE:g} {qr_left:.2f} {qr_top:.2f} cm\n" + "\n".join(rects) + "\nf\nQ\n"
    text_left = qr_left + (21 + QUIET) * MODULE
    baseline = top - LABEL_HEIGHT / 2 - FONT_SIZE / 3
    return drawn + f"BT /F1 {FONT_SIZE} Tf {text_left:.2f} {baseline:.2f} Td ({_text(code)}) Tj ET\n"


class SheetWriter:
    """Writes the PDF in three steps: ``start()``, ``page(codes)`` per page, ``finish()``; each
    answers the bytes to send next."""

    def __init__(self) -> None:
        self._written = 0
        self._offsets: dict[int, int] = {}
        self._pages: list[int] = []

    def _object(self, number: int, body: bytes) -> bytes:
        self._offsets[number] = self._written
        chunk = f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
        self._written += len(chunk)
        return chunk

    def start(self) -> bytes:
        header = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"
        self._written = len(header)
        return (
            header
            + self._object(_CATALOG, f"<< /Type /Catalog /Pages {_PAGES} 0 R >>".encode())
            + self._object(_FONT, b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
        )

    def page(self, codes: Sequence[str]) -> bytes:
        """One sheet with up to ``PER_PAGE`` labels."""
        if len(codes) > PER_PAGE:
            raise ValueError(f"a sheet holds {PER_PAGE} labels")
        content = zlib.compress("".join(label(code, slot) for slot, code in enumerate(codes)).encode("ascii"))
        contents = _FIRST_PAGE_OBJECT + 2 * len(self._pages)
        self._pages.append(contents + 1)
        stream = f"<< /Length {len(content)} /Filter /FlateDecode >>\nstream\n".encode() + content + b"\nendstream"
        page = (
            f"<< /Type /Page /Parent {_PAGES} 0 R /MediaBox [0 0 {PAGE_WIDTH} {PAGE_HEIGHT}]"
            f" /Resources << /Font << /F1 {_FONT} 0 R >> >> /Contents {contents} 0 R >>"
        )
        return self._object(contents, stream) + self._object(contents + 1, page.encode())

    def finish(self) -> bytes:
        """The page tree, the cross-reference table and the trailer; an empty batch gets one blank page."""
        blank = self.page([]) if not self._pages else b""
        kids = " ".join(f"{number} 0 R" for number in self._pages)
        tree = self._object(_PAGES, f"<< /Type /Pages /Kids [{kids}] /Count {len(self._pages)} >>".encode())
        size = max(self._offsets) + 1
        xref_at = self._written
        entries = "".join(f"{self._offsets[n]:010d} 00000 n \n" for n in range(1, size))
        table = f"xref\n0 {size}\n0000000000 65535 f \n{entries}"
        trailer = f"trailer\n<< /Size {size} /Root {_CATALOG} 0 R >>\nstartxref\n{xref_at}\n%%EOF\n"
        return blank + tree + (table + trailer).encode()
