"""`loyalty serve` end to end: granian serves the app, migrations run on start, SIGTERM shuts down cleanly."""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request
from pathlib import Path

from tests.support.ports import free_port
from tests.support.processes import started


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_serve_answers_and_stops_on_sigterm(database_url: str, tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "DATABASE_URL": database_url, "LOYALTY_PORT": str(port), "LOYALTY_HOME": str(tmp_path)}
    env.pop("REDIS_URL", None)
    with started([sys.executable, "-m", "loyalty_api.cli", "serve"], env, tmp_path / "serve.log") as command:
        command.wait_answering(f"http://127.0.0.1:{port}/health/live")
        status, headers, body = _get(f"http://127.0.0.1:{port}/api/v1/nope")
        assert status == 404
        assert b'"code":"ROUTE_NOT_FOUND"' in body
        assert headers["x-request-id"]
        assert (tmp_path / "admin-token").exists()
        code = command.stop()
    assert code == 0, command.output
    assert "request_id" in command.output


def test_worker_runs_and_stops_on_sigterm(database_url: str, tmp_path: Path) -> None:
    """`loyalty worker` (LOYALTY_WORKER=external): runs the queue and drains on SIGTERM."""
    env = {**os.environ, "DATABASE_URL": database_url, "LOYALTY_HOME": str(tmp_path)}
    env.pop("REDIS_URL", None)
    with started([sys.executable, "-m", "loyalty_api.cli", "worker"], env, tmp_path / "worker.log") as command:
        command.wait_for("worker running")
        code = command.stop()
    assert code == 0, command.output
