"""The Redis the tests use: ``LOYALTY_TEST_REDIS_URL`` or ``REDIS_URL`` when set, else the local
server on 127.0.0.1:6379 when one answers, else a ``redis-server`` this process starts on a free
port (stopped when the process ends). So the Redis tests run on a fresh machine too; only a machine
without the ``redis-server`` binary fails them, loudly (CI installs it).

Imports nothing beyond the standard library and pytest: every package's environment uses it."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from urllib.parse import urlsplit

import pytest

from tests.support.ports import free_port

LOCAL = "redis://127.0.0.1:6379/15"
START_SECONDS = 30
"""Longest wait for a started redis-server to answer (a loaded machine starts slowly)."""
_started: list[str] = []  # the URL of the server this process started, once it has


def answers(url: str) -> bool:
    parts = urlsplit(url)
    try:
        socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379), timeout=1).close()
    except OSError:
        return False
    return True


def start_redis_server(port: int) -> subprocess.Popen[bytes]:
    """A redis-server on ``port`` that keeps nothing on disk, answering when this returns, in a
    session of its own; its output goes to a temporary file that a failed start shows."""
    with tempfile.TemporaryFile() as log:
        server = subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + START_SECONDS
        while not answers(f"redis://127.0.0.1:{port}/0"):
            if server.poll() is not None or time.monotonic() > deadline:
                stop_redis_server(server, grace=0)
                log.seek(0)
                said = log.read().decode(errors="replace").splitlines()[-30:]
                raise RuntimeError(f"redis-server on port {port} did not start:\n" + "\n".join(said))
            time.sleep(0.05)
    return server


def stop_redis_server(server: subprocess.Popen[bytes], grace: float = 30) -> None:
    """SIGTERM, up to ``grace`` seconds, then its whole session is killed."""
    if server.poll() is None:
        server.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.wait(grace)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(server.pid, signal.SIGKILL)
    server.wait()


def redis_url() -> str:
    """The tests' Redis, started here when none is configured and none answers locally."""
    configured = os.environ.get("LOYALTY_TEST_REDIS_URL") or os.environ.get("REDIS_URL")
    if configured:
        if not answers(configured):
            pytest.fail(f"the configured Redis {configured} does not answer")
        return configured
    if _started:
        return _started[0]
    return LOCAL if answers(LOCAL) else own_redis_url()


def known_redis_url() -> str | None:
    """The Redis the run has used, if any answers; never starts one (the end-of-session clean-up)."""
    configured = os.environ.get("LOYALTY_TEST_REDIS_URL") or os.environ.get("REDIS_URL")
    url = _started[0] if _started else configured or LOCAL
    return url if answers(url) else None


def own_redis_url() -> str:
    """Start this process's own redis-server (once) and answer its URL."""
    if not _started:
        if shutil.which("redis-server") is None:
            pytest.fail(
                "the Redis tests need a Redis: none answers on 127.0.0.1:6379, none is configured "
                "(LOYALTY_TEST_REDIS_URL) and no redis-server binary is on PATH to start one"
            )
        port = free_port()
        atexit.register(stop_redis_server, start_redis_server(port))
        _started.append(f"redis://127.0.0.1:{port}/0")
    return _started[0]
