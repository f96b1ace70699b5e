"""The scale-out shape of deploy/Procfile on this machine, for the multi-process tests: two API
processes and one job worker, each entry under its own honcho, sharing a fresh database, a Redis of
their own (a redis-server on a free port, so it can be stopped) and one LOYALTY_HOME.

``kill(name)`` is ``kill -9`` of one entry's process; ``start(name)`` starts it again. Logs go to
``<home>/logs/<entry>.log``. Every process started here is stopped by ``down()``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil

from tests.support.database import database_name, fresh_database
from tests.support.ports import free_port
from tests.support.redis_server import start_redis_server, stop_redis_server

ROOT = Path(__file__).resolve().parents[2]
PROCFILE = ROOT / "deploy" / "Procfile"
ENTRIES = ("api_a", "api_b", "worker")
UNLIMITED = {"LOYALTY_ANON_RATE_PER_MINUTE": "1000000", "LOYALTY_MAX_RATE_PER_MINUTE": "1000000"}
"""Settings for a deployment under a fuzzer: no allowance runs out (the rate tests set their own)."""
START_SECONDS = 90
"""Longest wait for a process to answer after its start (a loaded machine imports slowly)."""


class Deployment:
    def __init__(self, home: Path, env: dict[str, str] | None = None) -> None:
        self.home = home
        self.logs = home / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.admin_token = "deployment-test-admin-token-of-32-bytes-or-more"
        self.database_url = fresh_database(database_name("deployment"))
        self.redis_port = free_port()
        self.redis_url = f"redis://127.0.0.1:{self.redis_port}/0"
        self.ports = {"api_a": free_port(), "api_b": free_port()}
        self.urls = [f"http://127.0.0.1:{port}" for port in self.ports.values()]
        self.overrides = env or {}
        self._honchos: dict[str, subprocess.Popen[bytes]] = {}
        self._redis: subprocess.Popen[bytes] | None = None

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LOYALTY_", "REDIS_URL", "DATABASE_URL"))}
        env.update(
            DATABASE_URL=self.database_url,
            REDIS_URL=self.redis_url,
            LOYALTY_HOME=str(self.home),
            LOYALTY_ADMIN_TOKEN=self.admin_token,
            API_A_PORT=str(self.ports["api_a"]),
            API_B_PORT=str(self.ports["api_b"]),
            API_WORKERS="2",
            PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            **self.overrides,
        )
        return env

    # --- the processes -------------------------------------------------------------------------

    def up(self) -> None:
        from loyalty_api import migrate

        migrate.upgrade(self.database_url)  # once, before two servers would race to do it
        self.start_redis()
        for name in ENTRIES:
            self.start(name)
        self.wait_ready()

    def start(self, name: str) -> None:
        with open(self.logs / f"{name}.log", "ab") as log:
            self._honchos[name] = subprocess.Popen(
                [sys.executable, "-m", "honcho", "-f", str(PROCFILE), "-d", str(ROOT), "--no-colour", "start", name],
                env=self.environment(),
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def kill(self, name: str) -> None:
        """``kill -9`` of the entry's process and every process it started (an API process's granian
        workers); honcho sees it die and ends too. honcho runs each entry from a process of its own,
        so the entry's process is a grandchild of honcho."""
        honcho = self._honchos.pop(name)
        deadline = time.monotonic() + START_SECONDS
        while not (entry := [p for c in psutil.Process(honcho.pid).children() for p in c.children()]):
            assert honcho.poll() is None, f"{name}'s honcho ended"
            assert time.monotonic() < deadline, f"{name}'s honcho started no process"
            time.sleep(0.01)
        victims = list(entry)
        for process in entry:
            with contextlib.suppress(psutil.NoSuchProcess):
                victims += process.children(recursive=True)
        for process in victims:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.send_signal(signal.SIGKILL)
        honcho.wait(30)

    def wait_answering(self, name: str) -> None:
        """Until an API entry answers ``/health/live`` (after ``start``)."""
        deadline = time.monotonic() + START_SECONDS
        while not self._answers(f"http://127.0.0.1:{self.ports[name]}/health/live"):
            assert time.monotonic() < deadline, f"{name} did not answer after its start"
            time.sleep(0.2)

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_SECONDS
        for url in self.urls:
            while not self._answers(f"{url}/health/ready"):
                assert time.monotonic() < deadline, f"{url} did not get ready"
                time.sleep(0.2)
        while b"worker running" not in (self.logs / "worker.log").read_bytes():
            assert time.monotonic() < deadline, "the worker did not start"
            time.sleep(0.1)

    @staticmethod
    def _answers(url: str) -> bool:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return bool(response.status == 200)
        except (OSError, urllib.error.URLError):
            return False

    def down(self) -> None:
        for honcho in self._honchos.values():
            if honcho.poll() is None:
                honcho.send_signal(signal.SIGTERM)
        for honcho in self._honchos.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                honcho.wait(30)
            # whatever of its session is left (a worker that outlived its entry) goes too
            with contextlib.suppress(ProcessLookupError):
                os.killpg(honcho.pid, signal.SIGKILL)
            honcho.wait()
        self._honchos.clear()
        if self._redis is not None:
            self.stop_redis()

    # --- Redis ---------------------------------------------------------------------------------

    def start_redis(self) -> None:
        self._redis = start_redis_server(self.redis_port)

    def stop_redis(self) -> None:
        assert self._redis is not None
        stop_redis_server(self._redis)
        self._redis = None
