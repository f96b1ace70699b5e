"""An HTTPS receiver on 127.0.0.1 whose certificate names one host, and a TLS context that trusts it,
for tests of the delivery's certificate check."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler

from tests.support.self_signed import certificate, https_server, trusting


@contextmanager
def tls_receiver(host: str) -> Iterator[tuple[int, ssl.SSLContext, list[str]]]:
    """(port, a client context trusting the receiver's certificate, the Host headers received)."""
    cert, key = certificate(host)
    hosts: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            hosts.append(self.headers.get("Host", ""))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            return None

    with https_server(Handler, cert, key) as port:
        yield port, trusting(cert), hosts
