"""``loyalty serve`` as a person runs it: granian in its own process on a free port, over a database
of the test's, its output in ``<home>/serve.log``. ``Served.url`` is its base address; leaving the
``with`` block sends SIGTERM and waits for a clean exit, then kills whatever of its session is left
(tests/support/processes.py)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from tests.support.ports import free_port
from tests.support.processes import START_SECONDS, Started
from tests.support.service import ADMIN_TOKEN


def serve_environment(database_url: str, home: Path, **settings: str) -> dict[str, str]:
    """The environment ``loyalty serve`` gets: only the test's settings, none of the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOYALTY_", "REDIS_URL", "DATABASE_URL"))}
    env.update(DATABASE_URL=database_url, LOYALTY_HOME=str(home), LOYALTY_ADMIN_TOKEN=ADMIN_TOKEN, **settings)
    return env


def run_serve(env: dict[str, str], timeout: float = START_SECONDS) -> subprocess.CompletedProcess[str]:
    """``loyalty serve`` to its end, in a session of its own that is killed after: for starts that
    must fail (one that served on is killed when ``timeout`` runs out, and raises)."""
    with subprocess.Popen(
        [sys.executable, "-m", "loyalty_api.cli", "serve"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as process:
        try:
            out, err = process.communicate(timeout=timeout)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


@dataclass
class Served:
    database_url: str
    home: Path
    settings: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    python: str = sys.executable
    """The interpreter of the environment to serve from (another install than the tests')."""
    command: Started | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.home / "serve.log"

    def __enter__(self) -> Served:
        env = serve_environment(self.database_url, self.home, LOYALTY_PORT=str(self.port), **self.settings)
        self.command = Started([self.python, "-m", "loyalty_api.cli", "serve"], env, self.log)
        try:
            self.command.wait_answering(f"{self.url}/health/live")
        except RuntimeError:
            self.command.end()
            raise
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        code = self.stop()
        if kind is None:
            assert code == 0, self.log.read_text()

    def stop(self) -> int | None:
        """SIGTERM and a clean exit's status; whatever of its session is left is killed."""
        return None if self.command is None else self.command.stop()
