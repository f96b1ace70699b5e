"""Reading back the card labels of a PDF the portal wrote: each page's content decompressed, and
per label its code (as text) and its QR modules (from the rectangles drawn), to compare with the
QR code segno makes of that text."""

from __future__ import annotations

import re
import zlib

import segno

STREAM = re.compile(rb"<< /Length (\d+) /Filter /FlateDecode >>\nstream\n")
LABEL = re.compile(
    r"q \S+ 0 0 \S+ \S+ \S+ cm\n(?P<rects>.*?)\nf\nQ\nBT /F1 \d+ Tf \S+ \S+ Td \((?P<code>[^)]*)\) Tj ET",
    re.DOTALL,
)
RECT = re.compile(r"(\d+) -(\d+) (\d+) 1 re")


def page_contents(pdf: bytes) -> list[str]:
    pages = []
    for found in STREAM.finditer(pdf):
        start = found.end()
        pages.append(zlib.decompress(pdf[start : start + int(found.group(1))]).decode("ascii"))
    return pages


def modules(rects: str) -> list[list[int]]:
    """The QR matrix the rectangles draw: one rectangle per run of dark modules in a row."""
    grid = [[0] * 21 for _ in range(21)]
    for start, row, length in RECT.findall(rects):
        for column in range(int(start), int(start) + int(length)):
            grid[int(row) - 1][column] = 1
    return grid


def labels(pdf: bytes) -> list[list[tuple[str, list[list[int]]]]]:
    """Per page, each label's code and QR matrix, in print order."""
    return [
        [(m.group("code"), modules(m.group("rects"))) for m in LABEL.finditer(content)]
        for content in page_contents(pdf)
    ]


def qr_of(code: str) -> list[list[int]]:
    """The QR matrix of ``code`` as segno makes it with the labels' error correction."""
    return [list(row) for row in segno.make_qr(code, error="h").matrix]
