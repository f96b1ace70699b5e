"""The service served for real (``loyalty serve`` in a subprocess) so a browser can reach it, and
small synchronous calls of its admin and public API."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.service import ADMIN_TOKEN


@dataclass(frozen=True)
class Live:
    url: str
    database_url: str
    home: Path
    """The service's home: its outbox folder holds the mails it wrote (no SMTP is configured)."""

    def call(self, method: str, path: str, body: Any = None, token: str = ADMIN_TOKEN) -> tuple[int, Any]:
        request = urllib.request.Request(
            self.url + path,
            data=None if body is None else json.dumps(body).encode(),
            method=method,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                raw = answer.read()
                return answer.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as refused:
            raw = refused.read()
            return refused.code, json.loads(raw) if raw else None

    def admin(self, method: str, path: str, body: Any = None) -> Any:
        status, answer = self.call(method, path, body)
        assert status in (200, 201, 204), (status, answer)
        return answer["data"] if answer else None

    def token(self, client_id: str, secret: str) -> str:
        body = f"grant_type=client_credentials&client_id={client_id}&client_secret={secret}".encode()
        request = urllib.request.Request(self.url + "/oauth/token", data=body, method="POST")
        with urllib.request.urlopen(request, timeout=30) as answer:
            return str(json.loads(answer.read())["access_token"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def served(database_url: str, home: Path) -> Iterator[Live]:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "LOYALTY_PORT": str(port),
        "LOYALTY_HOME": str(home),
        "LOYALTY_PUBLIC_URL": url,
        "LOYALTY_ADMIN_TOKEN": ADMIN_TOKEN,
        "LOYALTY_TEST_MODE": "1",
        "LOYALTY_WORKER": "external",
        "LOYALTY_LOG_LEVEL": "WARNING",
    }
    env.pop("REDIS_URL", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "loyalty_api.cli", "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "/health/live", timeout=2):
                    break
            except (OSError, urllib.error.HTTPError):
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("the service did not start") from None
                time.sleep(0.2)
        yield Live(url, database_url, home)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
