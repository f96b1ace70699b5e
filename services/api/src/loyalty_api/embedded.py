"""The embedded PostgreSQL default: with no ``DATABASE_URL`` one is started in ``<home>/pgdata``.

A stop signal must end the command within OPS-9's 5 seconds at any point, this database's start
and stop included, on a loaded machine too. Two steps were too slow there (measured at a load of
12 on 2 cores): a first start's ``initdb``, which a stop signal had to wait for (5.7 s), and
pgserver's ``pg_ctl -w stop`` (up to 1.5 s after granian's own stop). So the start runs in a
thread the main thread waits for, and a stop signal cuts it short (``_abort``: ``initdb`` cleans
its half-made directory away on SIGTERM, a PostgreSQL still starting is stopped at once); and the
stop signals the postmaster itself, fast first, immediate after a deadline (``_end_postmaster``).
This database is a developer's default, never production's: an immediate stop loses nothing
committed (every commit is in the WAL, which the next start replays), it only makes that start a
little longer.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from loyalty_api.lifetimes import Stopped, StopSignals
from loyalty_api.settings import Settings

FAST_STOP_SECONDS = 1.0
"""How long the postmaster gets for a fast stop (sessions ended, a checkpoint) before an immediate
one (no checkpoint: the next start replays the WAL)."""
IMMEDIATE_STOP_SECONDS = 1.0
"""How long an immediate stop may take before the postmaster is killed."""
ABORT_SECONDS = 2.0
"""How long a start cut short by a stop signal may take to unwind."""
POLL_SECONDS = 0.02


class EmbeddedPostgres:
    """A pgserver instance, reused across starts (its data stays in ``pgdata``) and stopped on close."""

    def __init__(self, home: Path) -> None:
        self.pgdata = home.resolve() / "pgdata"
        self._server: Any = None
        self._aborted = False

    def start(self) -> str:
        """Start (or join) the server; a stop signal (``Stopped``) while it starts cuts it short."""
        outcome: list[str | BaseException] = []

        def run() -> None:
            try:
                outcome.append(self._start())
            except BaseException as failed:  # handed to the main thread, which raises it
                outcome.append(failed)

        thread = threading.Thread(target=run, name="embedded-postgresql", daemon=True)
        try:
            thread.start()
            while thread.is_alive():
                thread.join(POLL_SECONDS * 5)
        except Stopped:
            self._abort(thread)
            raise
        (result,) = outcome
        if isinstance(result, BaseException):
            raise result
        return result

    def _start(self) -> str:
        self.pgdata.parent.mkdir(parents=True, exist_ok=True)
        # pgserver's import asks platformdirs for a runtime directory, which warns where
        # XDG_RUNTIME_DIR is unset (containers, CI); it falls back to /tmp and works
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pgserver

            self._server = pgserver.get_server(self.pgdata, cleanup_mode="stop")  # type: ignore[attr-defined]
        return "postgresql+psycopg://postgres@/postgres?host=" + str(self.pgdata)

    def _abort(self, thread: threading.Thread) -> None:
        """End the start under way: ``initdb`` and ``pg_ctl`` get SIGTERM, a PostgreSQL they started
        SIGQUIT (an immediate stop), until the starting thread has given up."""
        import psutil

        self._aborted = True
        logging.getLogger("pgserver").disabled = True  # its start fails on purpose: no error lines
        deadline = time.monotonic() + ABORT_SECONDS
        while thread.is_alive() and time.monotonic() < deadline:
            for process in psutil.Process().children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    name = process.name()
                    if name in ("initdb", "pg_ctl"):
                        process.send_signal(signal.SIGTERM)
                    elif name == "postgres":
                        process.send_signal(signal.SIGQUIT)
            thread.join(POLL_SECONDS * 5)

    def stop(self) -> None:
        """Stop the server unless another process still uses it (pgserver counts the processes that
        use one ``pgdata``); after a start cut short, stop whatever PostgreSQL that start left."""
        server, self._server = self._server, None
        if server is None:
            if self._aborted:
                _end_postmaster(self.pgdata)
            return
        import psutil

        with server._lock:
            users = server.global_process_id_list.get_and_remove(os.getpid())
            # the last one (a user killed before it could say it is done does not count): stop it
            if [pid for pid in users if psutil.pid_exists(pid)] == [os.getpid()]:
                _end_postmaster(self.pgdata)
                type(server)._instances.pop(server.pgdata, None)
        atexit.unregister(server._cleanup)


def _end_postmaster(pgdata: Path) -> None:
    """Stop the PostgreSQL whose ``postmaster.pid`` is in ``pgdata``: SIGINT (fast: sessions ended, a
    checkpoint), SIGQUIT (immediate) if it has not ended within ``FAST_STOP_SECONDS``, SIGKILL last."""
    import psutil

    try:
        pid = int((pgdata / "postmaster.pid").read_text().split("\n", 1)[0])
        postmaster = psutil.Process(pid)
    except (OSError, ValueError, psutil.Error):
        return  # not running
    for signum, seconds in (
        (signal.SIGINT, FAST_STOP_SECONDS),
        (signal.SIGQUIT, IMMEDIATE_STOP_SECONDS),
        (signal.SIGKILL, IMMEDIATE_STOP_SECONDS),
    ):
        try:
            postmaster.send_signal(signum)  # psutil checks it is still that process, not a reused pid
        except psutil.Error:
            return
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if not _running(postmaster):
                return
            time.sleep(POLL_SECONDS)


def _running(process: Any) -> bool:
    import psutil

    try:
        return bool(process.status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


@contextlib.contextmanager
def database_for(settings: Settings, signals: StopSignals) -> Iterator[Settings]:
    """The settings with a database URL: the configured one, or that of an embedded server started
    here and stopped on the way out, however the command ends. A stop signal cuts its start short
    (``EmbeddedPostgres.start``) but never its stop (``signals.held``): the stop must finish."""
    if settings.database_url is not None:
        yield settings
        return
    embedded = EmbeddedPostgres(settings.home)
    print(f"loyalty: starting embedded PostgreSQL in {embedded.pgdata}", file=sys.stderr, flush=True)
    try:
        url = embedded.start()
        yield msgspec.structs.replace(settings, database_url=url)
    finally:
        with signals.held():
            print("loyalty: stopping embedded PostgreSQL", file=sys.stderr, flush=True)
            embedded.stop()
