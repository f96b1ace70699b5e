"""A real HTTP receiver for webhook tests: a threaded server on 127.0.0.1 that records every request
and answers from a script (a status per request, or a hang)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    port: int
    answers: list[int | float] = field(default_factory=list)
    """Popped per request: an int is the status to answer; a float is seconds to hang first, then 200."""
    received: list[Received] = field(default_factory=list)
    at_once: int = 0
    """Requests being answered now."""
    most_at_once: int = 0
    """The most requests it was answering at one moment."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"


@contextmanager
def receiver() -> Iterator[Receiver]:
    state = Receiver(port=0)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with lock:
                state.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                answer = state.answers.pop(0) if state.answers else 200
                state.at_once += 1
                state.most_at_once = max(state.most_at_once, state.at_once)
            try:
                if isinstance(answer, float):
                    time.sleep(answer)
                    answer = 200
            finally:
                with lock:
                    state.at_once -= 1
            self.send_response(answer)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
