"""`just test`'s lanes: which recipes each runs, how many run at once, and running them.

Four lanes hold every suite once (``LANES``; tests/api/test_lanes.py checks it against the
justfile's recipes). How many run at once follows the machine, checked before anything starts
(``plan``): ``LANES_PER_CORE`` per core (the suites wait on servers and browsers much of the time),
and no more than the tests' PostgreSQL has free connections for (``CONNECTIONS``, each lane's as
measured in docs/contributing.md "Busy machine": the hungriest lanes together). A run that would
exhaust the server fails in every lane at once ("too many clients"), so too few connections for
even one lane is one line and exit status 1 before any test runs. ``LOYALTY_TEST_LANES`` overrides
the count (and skips the check).

Each lane's recipes run one after another, each ``just`` in a session of its own (killed as a
group if the run is interrupted), every output line prefixed by the lane's name.

    python -m tests.support.lanes --just JUST --justfile JUSTFILE [pytest options]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import IO
from urllib.parse import urlsplit

LANES: dict[str, tuple[str, ...]] = {
    "service": ("test-api-in-process",),
    "processes": ("test-api-procs",),
    "portal": ("test-portal",),
    "packages": ("test-core", "test-wallet-pass", "test-client", "test-http"),
}
"""Longest first, so that with fewer slots than lanes the short ones fill in at the end."""
LANES_PER_CORE = 2
CONNECTIONS: dict[str, int] = {"processes": 30, "portal": 24, "packages": 24, "service": 16}
"""The most connections each lane held at once in the busy-machine run (docs/contributing.md): its
pytest's pools and the servers its tests start. Peaks rarely meet (two lanes held 46 at most there,
of the 54 their peaks add up to), and a connection that finds the server full waits for a slot."""
OVERRIDE = "LOYALTY_TEST_LANES"
NO_TESTS = 5
"""pytest's status when options such as -k select none of a suite's tests: no failure."""


class TooFew(Exception):
    """Not even one lane can run; the message is the one line the run prints."""


@dataclass(frozen=True)
class Server:
    """What the tests' PostgreSQL has room for, read before the run starts."""

    where: str
    max_connections: int
    in_use: int
    reserved: int

    @property
    def free(self) -> int:
        return max(0, self.max_connections - self.in_use - self.reserved)


def plan(cores: int, server: Server | None, override: str | None) -> tuple[int, str]:
    """How many lanes run at once, and the line that says why. ``server`` None: an embedded
    PostgreSQL of the run's own, which nobody else uses."""
    if override is not None:
        if not override.strip().isdigit() or int(override) < 1:
            raise TooFew(f"{OVERRIDE}={override!r} is not a whole number of lanes of at least 1")
        lanes = min(int(override), len(LANES))
        return lanes, f"lanes: {lanes} at once ({OVERRIDE}={override.strip()})"
    by_cores = max(1, cores) * LANES_PER_CORE
    if server is None:
        lanes = min(by_cores, len(LANES))
        return lanes, f"lanes: {lanes} at once ({cores} cores; an embedded PostgreSQL of the run's own)"
    by_connections = max((n for n in range(1, len(LANES) + 1) if needed(n) <= server.free), default=0)
    if by_connections < 1:
        raise TooFew(
            f"too few free PostgreSQL connections for one test lane: {server.free} free at {server.where} "
            f"(max_connections {server.max_connections}, {server.in_use} in use, {server.reserved} reserved), "
            f"{needed(1)} needed; free some or set {OVERRIDE}=1 to try anyway"
        )
    lanes = min(by_cores, by_connections, len(LANES))
    return lanes, (
        f"lanes: {lanes} at once ({cores} cores; {server.free} of {server.max_connections} PostgreSQL "
        f"connections free at {server.where}, {needed(lanes)} needed)"
    )


def needed(lanes: int) -> int:
    """The connections ``lanes`` lanes at once may hold: any of them may run together, so the
    hungriest that many."""
    return sum(sorted(CONNECTIONS.values(), reverse=True)[:lanes])


def read_server(url: str) -> Server:
    """The server's connection limit, its client connections now and the slots only superusers
    may take (``reserved_connections`` too on PostgreSQL 16 and later)."""

    from tests.support.database import connect

    with connect(url) as conn:
        row = conn.execute(
            "SELECT current_setting('max_connections')::int,"
            " (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int,"
            " current_setting('superuser_reserved_connections')::int"
            " + coalesce(current_setting('reserved_connections', true), '0')::int"
        ).fetchone()
    assert row is not None
    limit, in_use, reserved = (int(str(value)) for value in row)
    parts = urlsplit(url)
    # the connection this check holds is gone once the lanes start
    return Server(f"{parts.hostname or 'a local socket'}:{parts.port or 5432}", limit, in_use - 1, reserved)


def cores() -> int:
    """The cores this process may run on (a container's or taskset's limit, not the host's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class Lanes:
    """Runs each lane's recipes through ``just`` with at most ``at_once`` lanes at a time."""

    def __init__(self, command: Callable[[str], list[str]], out: IO[str]) -> None:
        self._command = command
        self._out = out
        self._printing = threading.Lock()
        self._running: set[subprocess.Popen[str]] = set()
        self._stopping = False

    def run(self, lanes: dict[str, tuple[str, ...]], at_once: int) -> bool:
        """True when every lane passed; each lane's last line says how it went and how long it took."""
        with ThreadPoolExecutor(max_workers=at_once) as pool:
            done = list(pool.map(lambda item: self._lane(*item), lanes.items()))
        return all(done)

    def stop(self) -> None:
        """Kill every lane's session (its pytest, the servers and browsers the tests started)."""
        self._stopping = True
        for process in list(self._running):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)

    def _say(self, line: str) -> None:
        with self._printing:
            self._out.write(line)
            self._out.flush()

    def _lane(self, name: str, recipes: tuple[str, ...]) -> bool:
        started, passed = time.monotonic(), True
        for recipe in recipes:
            if self._stopping:
                return False
            with subprocess.Popen(
                self._command(recipe),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                start_new_session=True,
            ) as process:
                self._running.add(process)
                try:
                    assert process.stdout is not None
                    for line in process.stdout:
                        self._say(f"[{name}] {line}")
                    passed &= process.wait() in (0, NO_TESTS)
                finally:
                    self._running.discard(process)
        took = int(time.monotonic() - started)
        self._say(f"[{name}] lane finished: {'passed' if passed else 'FAILED'} in {took // 60}m{took % 60}s\n")
        return passed


def _server() -> Server | None:
    from tests.support.database import shared_server_url

    url = shared_server_url()
    return None if url is None else read_server(url)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.lanes",
        description="Run `just test`'s lanes, as many at once as the cores and the tests' PostgreSQL "
        "allow; every other option is passed to each suite's pytest.",
        allow_abbrev=False,
    )
    parser.add_argument("--just", required=True, help="the just executable")
    parser.add_argument("--justfile", required=True, help="the justfile holding the lanes' recipes")
    options, pytest_options = parser.parse_known_args(argv)
    try:
        at_once, why = plan(cores(), _server(), os.environ.get(OVERRIDE))
    except TooFew as refused:
        print(f"just test: {refused}", file=sys.stderr)
        return 1
    print(why, flush=True)
    lanes = Lanes(lambda recipe: [options.just, "--justfile", options.justfile, recipe, *pytest_options], sys.stdout)

    def interrupted(signum: int, frame: object) -> None:
        lanes.stop()
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)
    return 0 if lanes.run(LANES, at_once) else 1


if __name__ == "__main__":
    sys.exit(main())
