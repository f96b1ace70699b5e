"""``loyalty serve`` as a person runs it: granian in its own process on a free port, over a database
of the test's, its output in ``<home>/serve.log``. ``Served.url`` is its base address; leaving the
``with`` block sends SIGTERM and waits for a clean exit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from tests.support.ports import free_port
from tests.support.service import ADMIN_TOKEN

START_SECONDS = 60
"""Longest wait for the service to answer after its start (a loaded machine imports slowly)."""


def serve_environment(database_url: str, home: Path, **settings: str) -> dict[str, str]:
    """The environment ``loyalty serve`` gets: only the test's settings, none of the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOYALTY_", "REDIS_URL", "DATABASE_URL"))}
    env.update(DATABASE_URL=database_url, LOYALTY_HOME=str(home), LOYALTY_ADMIN_TOKEN=ADMIN_TOKEN, **settings)
    return env


def run_serve(env: dict[str, str], timeout: float = START_SECONDS) -> subprocess.CompletedProcess[str]:
    """``loyalty serve`` to its end: for starts that must fail."""
    return subprocess.run(
        [sys.executable, "-m", "loyalty_api.cli", "serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@dataclass
class Served:
    database_url: str
    home: Path
    settings: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    python: str = sys.executable
    """The interpreter of the environment to serve from (another install than the tests')."""
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.home / "serve.log"

    def __enter__(self) -> Served:
        env = serve_environment(self.database_url, self.home, LOYALTY_PORT=str(self.port), **self.settings)
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                [self.python, "-m", "loyalty_api.cli", "serve"], env=env, stdout=out, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + START_SECONDS
        while not self._answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"loyalty serve did not answer:\n{self.log.read_text()}")
            time.sleep(0.2)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        code = self.stop()
        if kind is None:
            assert code == 0, self.log.read_text()

    def stop(self) -> int | None:
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/health/live", timeout=2) as response:
                return bool(response.status == 200)
        except (OSError, urllib.error.URLError):
            return False
