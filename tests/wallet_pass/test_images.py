"""``check_png``: the shop image rules the pass builder and the branding upload share. Beyond the
chunk walk, the image data must inflate to exactly the rows the header announces, and inflating
stops there, so a small upload cannot expand into gigabytes."""

from __future__ import annotations

import struct
import zlib

import pytest

from loyalty_wallet_pass.errors import InvalidImage
from loyalty_wallet_pass.images import MAX_SIDE, check_png, default_logo, encode_png


def _with_data(width: int, height: int, data: bytes) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")


@pytest.mark.parametrize(("width", "height"), [(1, 1), (3, 7), (MAX_SIDE, 1), (1, MAX_SIDE)])
def test_images_that_decode_pass_with_their_size(width: int, height: int) -> None:
    assert check_png(encode_png(width, height, bytes(width * height * 4)), what="logo") == (width, height)
    assert check_png(default_logo(160, 50, (1, 2, 3)), what="logo") == (160, 50)


def test_data_inflating_past_the_announced_rows_is_refused_without_inflating_it_all() -> None:
    bomb = zlib.compress(bytes(200_000_000), 9)  # about 200 KB that would inflate to 200 MB
    with pytest.raises(InvalidImage, match=r"icon image is a damaged PNG \(image data of the wrong size\)"):
        check_png(_with_data(4, 4, bomb), what="icon")


def test_data_stopping_short_of_the_announced_rows_is_refused() -> None:
    rows = b"".join(b"\x00" + bytes(16) for _ in range(3))  # three rows of a 4x4 image
    with pytest.raises(InvalidImage, match="wrong size"):
        check_png(_with_data(4, 4, zlib.compress(rows)), what="icon")
    assert check_png(_with_data(4, 4, zlib.compress(rows + b"\x04" + bytes(16))), what="icon") == (4, 4)
