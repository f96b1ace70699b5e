"""PNG images for passes: checking a shop's upload, and drawing the clean default logo and icon.

The default is a filled disc in the shop's foreground colour: on a square of the background
colour for the icon (wallets show it in notifications, so it needs its own ground), on a
transparent strip for the logo (the pass shows the shop's name beside it). Drawn with zlib alone,
so the package needs no imaging library for two flat shapes.
"""

from __future__ import annotations

import struct
import zlib
from functools import lru_cache

from loyalty_wallet_pass.errors import InvalidImage

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_IMAGE_BYTES = 512 * 1024
MAX_SIDE = 1024
"""Wallets scale images down to at most 160x50 points (logo), 3x on the densest screens."""

Colour = tuple[int, int, int]


_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
"""Samples per pixel by PNG colour type: grey, RGB, palette, grey + alpha, RGBA."""
_DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))
"""The seven passes of an interlaced image: first column and row, then the steps between them."""


def check_png(data: bytes, *, what: str) -> tuple[int, int]:
    """The width and height of a PNG, or ``InvalidImage`` when it is none, is damaged or too large.

    Walks the chunks and checks each CRC, reads the header (sizes, a colour type and bit depth
    that exist), and inflates the image data to exactly the bytes its rows need, each row starting
    with a known filter: what a wallet would fail to decode is refused here rather than shown as a
    blank square, or failing every pass of the shop. Inflating stops at the size the header
    announces, so a small file cannot expand into gigabytes.
    """
    if len(data) > MAX_IMAGE_BYTES:
        raise InvalidImage(f"{what} image is {len(data)} bytes, more than {MAX_IMAGE_BYTES}")
    if not data.startswith(PNG_SIGNATURE):
        raise InvalidImage(f"{what} image is not a PNG")
    kinds: list[bytes] = []
    header = b""
    compressed: list[bytes] = []
    offset = len(PNG_SIGNATURE)
    while offset < len(data):
        if offset + 12 > len(data):
            raise InvalidImage(f"{what} image is a damaged PNG (cut short)")
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind, body = data[offset + 4 : offset + 8], data[offset + 8 : offset + 8 + length]
        end = offset + 8 + length
        if end + 4 > len(data) or struct.unpack(">I", data[end : end + 4])[0] != zlib.crc32(kind + body):
            raise InvalidImage(f"{what} image is a damaged PNG (chunk {kind!r})")
        if not kinds and (kind != b"IHDR" or length != 13):
            raise InvalidImage(f"{what} image is not a PNG")
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            compressed.append(body)
        kinds.append(kind)
        if kind == b"IEND":
            break  # some editors append bytes after the end; readers ignore them
        offset = end + 4
    if not kinds or kinds[-1] != b"IEND" or b"IDAT" not in kinds:
        raise InvalidImage(f"{what} image is a damaged PNG (no image data or end)")
    width, height, depth, colour, compression, filtering, interlace = struct.unpack(">IIBBBBB", header)
    if not (0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE):
        raise InvalidImage(f"{what} image is {width}x{height}, outside 1-{MAX_SIDE} pixels a side")
    if depth not in _DEPTHS.get(colour, ()) or compression != 0 or filtering != 0 or interlace not in (0, 1):
        raise InvalidImage(f"{what} image is a PNG of a kind wallets do not read (colour type {colour}, depth {depth})")
    if colour == 3 and b"PLTE" not in kinds:
        raise InvalidImage(f"{what} image is a damaged PNG (palette image without a palette)")
    _check_pixels(b"".join(compressed), width, height, depth * _CHANNELS[colour], interlace == 1, what)
    return width, height


def _check_pixels(compressed: bytes, width: int, height: int, bits: int, interlaced: bool, what: str) -> None:
    """The image data inflates to exactly the rows the header announces, each with a filter 0-4."""
    passes = _ADAM7 if interlaced else ((0, 0, 1, 1),)
    rows: list[int] = []  # the byte length of every row, filter byte included, in stream order
    for x0, y0, dx, dy in passes:
        columns, lines = -(-(width - x0) // dx), -(-(height - y0) // dy)
        if columns > 0 and lines > 0:
            rows.extend([1 + -(-(columns * bits) // 8)] * lines)
    expected = sum(rows)
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(compressed, expected + 1)
    except zlib.error as exc:
        raise InvalidImage(f"{what} image is a damaged PNG (image data does not inflate)") from exc
    if len(raw) != expected or not inflater.eof:
        raise InvalidImage(f"{what} image is a damaged PNG (image data of the wrong size)")
    position = 0
    for length in rows:
        if raw[position] > 4:
            raise InvalidImage(f"{what} image is a damaged PNG (unknown row filter)")
        position += length


def encode_png(width: int, height: int, rgba: bytes) -> bytes:
    """An 8-bit RGBA PNG of ``width`` x ``height`` pixels given row by row, 4 bytes each."""
    stride = width * 4
    if len(rgba) != stride * height:
        raise ValueError("pixel data does not match the size")
    # filter type 0 (none) before every row
    raw = b"".join(b"\x00" + rgba[row * stride : (row + 1) * stride] for row in range(height))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return PNG_SIGNATURE + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def _disc(width: int, height: int, *, centre_x: float, radius: float, disc: Colour, ground: Colour | None) -> bytes:
    """A disc on a flat ground (``None``: transparent), its edge smoothed by the pixel's coverage."""
    centre_y = height / 2
    pixels = bytearray()
    for y in range(height):
        for x in range(width):
            distance = ((x + 0.5 - centre_x) ** 2 + (y + 0.5 - centre_y) ** 2) ** 0.5
            coverage = min(1.0, max(0.0, radius - distance + 0.5))
            if ground is None:
                pixels += bytes((*disc, round(255 * coverage)))
            else:
                mixed = (round(d * coverage + g * (1 - coverage)) for d, g in zip(disc, ground, strict=True))
                pixels += bytes((*mixed, 255))
    return bytes(pixels)


@lru_cache(maxsize=256)
def default_icon(size: int, foreground: Colour, background: Colour) -> bytes:
    """A square icon: a disc of the foreground colour filling most of a background square."""
    rgba = _disc(size, size, centre_x=size / 2, radius=size * 0.34, disc=foreground, ground=background)
    return encode_png(size, size, rgba)


@lru_cache(maxsize=256)
def default_logo(width: int, height: int, foreground: Colour) -> bytes:
    """A logo strip: a disc of the foreground colour at its left end, the rest transparent."""
    rgba = _disc(width, height, centre_x=height / 2, radius=height * 0.4, disc=foreground, ground=None)
    return encode_png(width, height, rgba)
