"""A file upload read as a stream: the multipart body is parsed as it arrives, the form's CSRF token
checked before any byte of the file is accepted, and the file written to disk under a size limit of
its own, so an upload of any size holds one network chunk in memory. The form's one-time key comes
back with the file, for the handler to claim (PORTAL-21)."""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from litestar import Request
from multipart import MultipartSegment, ParserError, PushMultipartParser, parse_options_header

from loyalty_core.staff.services.sessions import Visitor, csrf_matches
from loyalty_portal.access import EXPIRED
from loyalty_portal.web import FORM_KEY, Refused


@dataclass(frozen=True, slots=True)
class Uploaded:
    path: Path
    file_name: str
    size: int


@dataclass(frozen=True, slots=True)
class Received:
    file: Uploaded | None
    """None when no file was chosen (or it is empty)."""
    form_key: str

    async def discard(self) -> None:
        if self.file is not None:
            await asyncio.to_thread(self.file.path.unlink, missing_ok=True)


class _Receiving:
    def __init__(self, visitor: Visitor, folder: Path, field: str, max_bytes: int) -> None:
        self.visitor, self.folder, self.field, self.max_bytes = visitor, folder, field, max_bytes
        self.segment: MultipartSegment | None = None
        self.token = b""
        self.form_key = b""
        self.csrf_ok = False
        self.out: IO[bytes] | None = None
        self.path: Path | None = None
        self.file_name = ""
        self.size = 0

    async def begin(self, segment: MultipartSegment) -> None:
        self.segment = segment
        if segment.name == self.field and self.out is None:
            if not self.csrf_ok:
                raise Refused(403, EXPIRED)
            self.file_name = (segment.filename or "import.csv").replace("\x00", "")[:255]
            self.path = self.folder / f"{self.visitor.vendor_id}-{secrets.token_hex(16)}.csv"
            self.out = await asyncio.to_thread(self.path.open, "wb")

    async def data(self, chunk: bytes) -> None:
        name = self.segment.name if self.segment else None
        if name == "csrf_token":
            self.token += chunk
            if len(self.token) > 256:
                raise Refused(403, EXPIRED)
        elif name == FORM_KEY:
            self.form_key += chunk
            if len(self.form_key) > 256:
                raise Refused(403, EXPIRED)
        elif name == self.field and self.out is not None:
            self.size += len(chunk)
            if self.size > self.max_bytes:
                raise Refused(413, f"The file is larger than {self.max_bytes // 1_048_576} MiB; split it in parts.")
            await asyncio.to_thread(self.out.write, chunk)

    def end(self) -> None:
        if self.segment is not None and self.segment.name == "csrf_token":
            self.csrf_ok = csrf_matches(self.visitor, self.token.decode("utf-8", "replace"))
            if not self.csrf_ok:
                raise Refused(403, EXPIRED)
        self.segment = None

    async def discard(self) -> None:
        if self.out is not None:
            await asyncio.to_thread(self.out.close)
        if self.path is not None:
            await asyncio.to_thread(self.path.unlink, missing_ok=True)


async def receive_file(
    request: Request[Any, Any, Any], visitor: Visitor, folder: Path, *, field: str, max_bytes: int
) -> Received:
    """The file of form field ``field`` written under ``folder``, and the form's key. 403 when the
    session's token does not come first; 413 past ``max_bytes``."""
    kind, options = parse_options_header(request.headers.get("content-type", ""))
    if kind != "multipart/form-data" or not options.get("boundary"):
        raise Refused(400, "The file was not sent as a form upload.")
    await asyncio.to_thread(folder.mkdir, parents=True, exist_ok=True)
    receiving = _Receiving(visitor, folder, field, max_bytes)
    try:
        parser = PushMultipartParser(options["boundary"], max_segment_count=8)
        async for chunk in request.stream():
            for event in parser.parse(chunk):
                await _event(receiving, event)
        for event in parser.parse(b""):  # the end of input: an unfinished body is refused here
            await _event(receiving, event)
    except ParserError:
        await receiving.discard()
        raise Refused(400, "The upload could not be read; send the form again.") from None
    except BaseException:
        await receiving.discard()
        raise
    if not receiving.csrf_ok:
        await receiving.discard()
        raise Refused(403, EXPIRED)
    form_key = receiving.form_key.decode("utf-8", "replace")
    if receiving.out is None or receiving.path is None:
        return Received(None, form_key)
    await asyncio.to_thread(receiving.out.close)
    if receiving.size == 0:
        await asyncio.to_thread(receiving.path.unlink, missing_ok=True)
        return Received(None, form_key)
    return Received(Uploaded(receiving.path, receiving.file_name, receiving.size), form_key)


async def _event(receiving: _Receiving, event: Any) -> None:
    if isinstance(event, MultipartSegment):
        await receiving.begin(event)
    elif event is None:
        receiving.end()
    else:
        await receiving.data(bytes(event))
