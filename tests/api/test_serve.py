"""`loyalty serve` end to end: granian serves the app, migrations run on start, SIGTERM shuts down cleanly."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_serve_answers_and_stops_on_sigterm(database_url: str, tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "DATABASE_URL": database_url, "LOYALTY_PORT": str(port), "LOYALTY_HOME": str(tmp_path)}
    env.pop("REDIS_URL", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "loyalty_api.cli", "serve"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 30
        status = 0
        while time.monotonic() < deadline:
            try:
                status, headers, body = _get(f"http://127.0.0.1:{port}/api/v1/nope")
                break
            except OSError:
                time.sleep(0.2)
        assert status == 404
        assert b'"code":"ROUTE_NOT_FOUND"' in body
        assert headers["x-request-id"]
        assert (tmp_path / "admin-token").exists()
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out.decode()
    assert b"request_id" in out


def test_worker_runs_and_stops_on_sigterm(database_url: str, tmp_path: Path) -> None:
    """`loyalty worker` (LOYALTY_WORKER=external): runs the queue and drains on SIGTERM."""
    env = {**os.environ, "DATABASE_URL": database_url, "LOYALTY_HOME": str(tmp_path)}
    env.pop("REDIS_URL", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "loyalty_api.cli", "worker"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 30
        seen = b""
        while b"worker running" not in seen and time.monotonic() < deadline:
            seen += proc.stdout.readline()
        assert b"worker running" in seen
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, (seen + out).decode()
