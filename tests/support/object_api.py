"""A stand-in for platform_b's token endpoint and object API over HTTPS on 127.0.0.1, in a thread:
``POST /token`` answers an access token; ``PATCH /walletobjects/v1/loyaltyObject/{id}`` answers
the next scripted status (200 when none is left). It keeps every request it received."""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs

from tests.support.self_signed import certificate, https_server, trusting


@dataclass
class ObjectApi:
    port: int
    trusting: ssl.SSLContext
    statuses: list[int] = field(default_factory=list)
    requests: list[tuple[str, str, dict[str, str], Any]] = field(default_factory=list)
    """(method, path, headers, body: the form as a dict for the token, the JSON for an object)."""


@contextmanager
def object_api(host: str) -> Iterator[ObjectApi]:
    cert, key = certificate(host)
    api = ObjectApi(port=0, trusting=trusting(cert))

    class Handler(BaseHTTPRequestHandler):
        def _body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _answer(self, status: int, body: bytes = b"") -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            form = {k: v[0] for k, v in parse_qs(self._body().decode()).items()}
            api.requests.append(("POST", self.path, dict(self.headers), form))
            self._answer(200, json.dumps({"access_token": "object-token", "expires_in": 3600}).encode())

        def do_PATCH(self) -> None:
            api.requests.append(("PATCH", self.path, dict(self.headers), json.loads(self._body() or b"null")))
            status = api.statuses.pop(0) if api.statuses else 200
            self._answer(status, b"{}")

        def log_message(self, *args: object) -> None:
            return None

    with https_server(Handler, cert, key) as port:
        api.port = port
        yield api
