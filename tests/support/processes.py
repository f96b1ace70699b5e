"""Processes the tests start (``loyalty serve``, workers, helpers): each in a session of its own,
so that the whole group it starts (granian's workers, an embedded PostgreSQL) is killed at the end
whatever happened, and its output in a file, so that a start that fails shows why.

``with started(argv, env, log) as command:`` ends the session on leaving, failure or not;
``command.wait_answering(url)`` waits for an address to answer, and a command that ends or does not
answer in time raises ``RuntimeError`` with the tail of its output."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

START_SECONDS = 90.0
"""Longest wait for a started command to answer on a loaded machine (imports, migrations, workers)."""
TAIL_LINES = 60


class Started:
    """A command in a session of its own, its output (both streams) in ``log``; ``end`` kills
    whatever of the session is left."""

    def __init__(self, argv: list[str], env: dict[str, str], log: Path, cwd: Path | None = None) -> None:
        self.log = log
        with log.open("wb") as out:
            self.process = subprocess.Popen(
                argv, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    @property
    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def tail(self, lines: int = TAIL_LINES) -> str:
        return "\n".join(self.output.splitlines()[-lines:])

    def wait_for(self, text: str, seconds: float = START_SECONDS) -> None:
        deadline = time.monotonic() + seconds
        while text not in self.output:
            assert self.process.poll() is None, f"ended before {text!r}:\n{self.output}"
            assert time.monotonic() < deadline, f"no {text!r} after {seconds} s:\n{self.output}"
            time.sleep(0.05)

    def wait_answering(self, url: str, seconds: float = START_SECONDS) -> None:
        """Until ``url`` answers 200; RuntimeError with the output's tail if the command ends first
        or nothing answers within ``seconds``."""
        deadline = time.monotonic() + seconds
        while not answers(url):
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"the service did not start (exit status {self.process.returncode}); the end of its output:\n"
                    f"{self.tail()}"
                )
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the service did not answer {url} within {seconds:.0f} s; the end of its output:\n{self.tail()}"
                )
            time.sleep(0.2)

    def stop(self, grace: float = 30.0) -> int:
        """SIGTERM, up to ``grace`` seconds for a clean exit, then the whole session is killed;
        answer the exit status (negative: the signal that ended it)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=grace)
        self.end()
        return self.process.returncode

    def session(self) -> list[Any]:
        """The living processes of the command's session (its process group), itself included."""
        import psutil

        return living(p for p in psutil.process_iter() if _group(p.pid) == self.process.pid)

    def end(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


@contextlib.contextmanager
def started(argv: list[str], env: dict[str, str], log: Path, cwd: Path | None = None) -> Iterator[Started]:
    command = Started(argv, env, log, cwd)
    try:
        yield command
    finally:
        command.end()


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


def _group(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def living(processes: Any) -> list[Any]:
    """Those still running: a zombie has ended, it only waits for its parent to read its status."""
    import psutil

    alive = []
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(process)
    return alive
