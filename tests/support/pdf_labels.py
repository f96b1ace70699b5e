"""Reading back the card labels of a PDF the portal wrote (fpdf2's output), without a PDF library:
its objects, each page's content stream decompressed, the embedded font's glyphs mapped back to text
by its ToUnicode map, and per label its QR modules (from the rectangles drawn), the shop's name and
the code, to compare with the QR code segno makes of that text."""

from __future__ import annotations

import re
import zlib
from typing import NamedTuple

import segno

OBJECT = re.compile(rb"(\d+) 0 obj\s*")
STREAM = re.compile(rb"<<(?P<dict>(?:(?!>>\s*stream).)*?)>>\s*stream\r?\n", re.DOTALL)
REF = rb"(\d+) 0 R"
TOKEN = re.compile(
    rb"\s*(?:(?P<string>\()|(?P<hex><[0-9A-Fa-f\s]*>)|(?P<name>/[^\s/\[\]()<>]+)|(?P<word>[^\s/\[\]()<>]+)|[\[\]])"
)
ESCAPES = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"b": b"\b", b"f": b"\f"}


class Label(NamedTuple):
    code: str
    modules: list[list[int]]
    shop: str
    code_size: float


def objects(pdf: bytes) -> dict[int, tuple[bytes, bytes | None]]:
    """Every object's dictionary text and, for a stream, its decoded bytes; read in order, so bytes of
    a compressed stream are never mistaken for an object."""
    found: dict[int, tuple[bytes, bytes | None]] = {}
    at = 0
    while (start := OBJECT.search(pdf, at)) is not None:
        number, body_at = int(start.group(1)), start.end()
        end = pdf.index(b"endobj", body_at)
        stream = STREAM.match(pdf, body_at)
        if stream is not None and stream.end() < end:
            info = stream.group("dict")
            length = int(re.search(rb"/Length (\d+)", info).group(1))  # type: ignore[union-attr]
            raw = pdf[stream.end() : stream.end() + length]
            data = zlib.decompress(raw) if b"/FlateDecode" in info else raw
            found[number] = (info, data)
            end = pdf.index(b"endobj", stream.end() + length)
        else:
            found[number] = (pdf[body_at:end], None)
        at = end + len(b"endobj")
    return found


def _ref(text: bytes, key: bytes) -> int:
    found = re.search(re.escape(key) + rb"\s+" + REF, text)
    assert found is not None, (key, text[:200])
    return int(found.group(1))


def _literal(content: bytes, at: int) -> tuple[bytes, int]:
    """The bytes of the literal string whose ``(`` is just before ``at``, and where it ends."""
    out, depth = bytearray(), 1
    while True:
        char = content[at : at + 1]
        at += 1
        if char == b"\\":
            following = content[at : at + 1]
            if following in ESCAPES:
                out += ESCAPES[following]
                at += 1
            elif following.isdigit():
                octal = re.match(rb"[0-7]{1,3}", content[at : at + 3])
                assert octal is not None
                out.append(int(octal.group(0), 8) & 0xFF)
                at += len(octal.group(0))
            elif following in (b"\n", b"\r"):
                at += 1
            else:
                out += following
                at += 1
        elif char == b"(":
            depth += 1
            out += char
        elif char == b")":
            depth -= 1
            if depth == 0:
                return bytes(out), at
            out += char
        else:
            out += char


def tokens(content: bytes) -> list[bytes | tuple[str, bytes]]:
    """The content stream's operands and operators: strings as ("string", bytes), the rest as bytes."""
    found: list[bytes | tuple[str, bytes]] = []
    at = 0
    while (token := TOKEN.match(content, at)) is not None and token.end() > at:
        at = token.end()
        if token.group("string"):
            text, at = _literal(content, at)
            found.append(("string", text))
        elif token.group("hex"):
            found.append(("string", bytes.fromhex(token.group("hex")[1:-1].decode())))
        else:
            found.append(token.group(0).strip())
    return found


def to_unicode(cmap: bytes) -> dict[int, str]:
    """A ToUnicode CMap's glyph ids and the text each stands for (bfchar and bfrange)."""
    glyphs: dict[int, str] = {}
    for block in re.findall(rb"beginbfchar(.*?)endbfchar", cmap, re.DOTALL):
        for glyph, text in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            glyphs[int(glyph, 16)] = bytes.fromhex(text.decode()).decode("utf-16-be")
    for block in re.findall(rb"beginbfrange(.*?)endbfrange", cmap, re.DOTALL):
        for first, last, text in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            start = int(text, 16)
            for offset, glyph in enumerate(range(int(first, 16), int(last, 16) + 1)):
                glyphs[glyph] = chr(start + offset)
    return glyphs


class Page(NamedTuple):
    content: bytes
    fonts: dict[bytes, dict[int, str]]
    """Per font resource name (``/F1``), its glyph ids' text."""
    font_names: dict[bytes, str]
    """Per font resource name, its ``/BaseFont`` and whether its glyphs are embedded (``+embedded``)."""


def pages(pdf: bytes) -> list[Page]:
    """The document's pages in order, each with its content and its fonts."""
    found = objects(pdf)
    root = _ref(found[int(re.search(rb"/Root\s+" + REF, pdf).group(1))][0], b"/Pages")  # type: ignore[union-attr]
    kids = [int(n) for n in re.findall(REF, re.search(rb"/Kids\s*\[(.*?)\]", found[root][0], re.DOTALL).group(1))]  # type: ignore[union-attr]
    result = []
    for kid in kids:
        page = found[kid][0]
        content = found[_ref(page, b"/Contents")][1] or b""
        resources = re.search(rb"/Resources\s+" + REF, page)
        resource_text = found[int(resources.group(1))][0] if resources else page
        font_block = re.search(rb"/Font\s*<<(.*?)>>", resource_text, re.DOTALL)
        fonts, names = {}, {}
        for name, number in re.findall(rb"(/[^\s/]+)\s+" + REF, font_block.group(1) if font_block else b""):
            font = found[int(number)][0]
            fonts[name] = to_unicode(found[_ref(font, b"/ToUnicode")][1] or b"") if b"/ToUnicode" in font else {}
            base = re.search(rb"/BaseFont\s*/(\S+)", font).group(1).decode()  # type: ignore[union-attr]
            embedded = False
            if b"/DescendantFonts" in font:
                descendant = found[int(re.search(rb"/DescendantFonts\s*\[\s*" + REF, font).group(1))][0]  # type: ignore[union-attr]
                descriptor = found[_ref(descendant, b"/FontDescriptor")][0]
                embedded = b"/FontFile2" in descriptor and bool(found[_ref(descriptor, b"/FontFile2")][1])
            names[name] = base + ("+embedded" if embedded else "")
        result.append(Page(content, fonts, names))
    return result


def _text(raw: bytes, glyphs: dict[int, str]) -> str:
    if not glyphs:
        return raw.decode("latin-1")
    return "".join(glyphs[int.from_bytes(raw[i : i + 2], "big")] for i in range(0, len(raw), 2))


def page_labels(page: Page) -> list[Label]:
    """The page's labels in print order: the rectangles of a QR code, then the shop's name and the code."""
    labels: list[Label] = []
    rects: list[tuple[float, float, float]] = []
    texts: list[tuple[str, float]] = []
    font, size, operands = b"", 0.0, list[bytes | tuple[str, bytes]]()

    def close() -> None:
        if rects:
            labels.append(_label(rects, texts))
        rects.clear()
        texts.clear()

    for token in tokens(page.content):
        if isinstance(token, tuple) or re.fullmatch(rb"[-+.\d]+|/\S+", token):
            operands.append(token)
            continue
        if token == b"re":
            if texts:
                close()
            x, y, w = (float(o) for o in operands[-4:-1])  # type: ignore[arg-type]
            rects.append((x, y, w))
        elif token == b"Tf":
            font, size = operands[-2], float(operands[-1])  # type: ignore[assignment, arg-type]
        elif token == b"Tj":
            string = operands[-1]
            assert isinstance(string, tuple)
            texts.append((_text(string[1], page.fonts.get(font, {})), size))
        operands = []
    close()
    return labels


def _label(rects: list[tuple[float, float, float]], texts: list[tuple[str, float]]) -> Label:
    left, top = min(x for x, _, _ in rects), max(y for _, y, _ in rects)
    grid = [[0] * 21 for _ in range(21)]
    for x, y, w in rects:
        row, start = round((top - y) / 3), round((x - left) / 3)
        for column in range(start, start + round(w / 3)):
            grid[row][column] = 1
    *names, (code, code_size) = texts or [("", 0.0)]
    return Label(code, grid, " ".join(name for name, _ in names), code_size)


def labels(pdf: bytes) -> list[list[Label]]:
    """Per page, each label's code, QR matrix and shop name, in print order."""
    return [page_labels(page) for page in pages(pdf)]


def label_fonts(pdf: bytes) -> set[str]:
    """The base names of the fonts the pages use (``+embedded`` when the font's glyphs are in the file)."""
    return {name for page in pages(pdf) for name in page.font_names.values()}


def qr_of(code: str) -> list[list[int]]:
    """The QR matrix of ``code`` as segno makes it with the labels' error correction."""
    return [list(row) for row in segno.make_qr(code, error="h").matrix]
