"""``loyalty serve``: the checks, the database (the configured one, or an embedded one started here),
the migrations, then granian's processes; and a stop that ends it all within a few seconds, whatever
the start is doing when SIGTERM or SIGINT arrives (OPS-9), the embedded PostgreSQL included.

Before granian takes over the signals, a stop raises ``Stopped`` (``lifetimes.StopSignals``), which
unwinds through the ``finally`` that stops the embedded PostgreSQL. granian's main process then
handles them with ``Server``'s handler, which takes no lock; its workers get ``STOP_GRACE_SECONDS``
to finish, then are killed; and each worker ends with the main process (``lifetimes``).
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

import msgspec
from granian import _signals as granian_signals
from granian.constants import Interfaces, Loops
from granian.log import LogLevels
from granian.server.mp import MPServer

from loyalty_api import lifetimes, preflight
from loyalty_api.embedded import database_for
from loyalty_api.logs import granian_logging
from loyalty_api.settings import Settings

STOP_GRACE_SECONDS = 3
"""How long granian's workers get, on SIGTERM, to finish the requests in hand and stop (their job
worker gives its jobs ``worker.SERVED_JOB_GRACE_SECONDS`` of it) before the main process kills them;
with the embedded PostgreSQL's stop after it, the whole stop fits in OPS-9's 5 seconds."""
WAKE_SECONDS = 0.1
"""How often the main process looks whether a stop signal has arrived (see ``Server``)."""


class Server(MPServer):
    """granian's multi-process server, with a stop signal handler that takes no lock.

    granian's own handler sets a ``threading.Event``. A second signal arriving while that handler is
    inside ``Event.set`` (or while the main thread is inside the event's ``wait`` or ``clear``, which
    take the same lock) re-enters the lock and hangs the process for good. Here the handler only sets
    the flag granian's loop reads, and a thread of the main process sets the event once it sees it.
    """

    def signal_handler_interrupt(self, *args: Any, **kwargs: Any) -> None:
        if self.pid is not None and os.getpid() != self.pid:
            # a worker forked before it has set up its own handlers inherits this one; it holds
            # nothing yet that needs a stop, and its parent is waiting for it to end
            os._exit(0)
        self.interrupt_signal = True

    parent: int | None = None
    """The process that started ``loyalty serve``: the server stops when it dies (OPS-8)."""

    def startup(self, spawn_target: Any, target_loader: Any) -> None:
        if self.parent is not None:
            lifetimes.die_with_parent(self.parent, grace=None, ask_kernel=False)
        threading.Thread(target=self._wake_on_stop, name="stop-signal", daemon=True).start()
        super().startup(spawn_target, target_loader)  # type: ignore[no-untyped-call]

    def _wake_on_stop(self) -> None:
        # the flag only ever goes up, and granian's loop leaves as soon as it sees it after a wake-up
        while not self.interrupt_signal:
            time.sleep(WAKE_SECONDS)
        self.main_loop_interrupt.set()

    def shutdown(self, exit_code: int = 0) -> None:
        if self.interrupt_signal:
            # a stop signal sent to the whole group (systemd, a terminal) ends the workers too, maybe
            # before this process asks them to: that is the stop asked for, not a worker's failure
            self.interrupt_children.clear()
        super().shutdown(exit_code)  # type: ignore[no-untyped-call]


def stop_signal_once(loop: Any) -> Any:
    """granian's ``set_loop_signals`` for a worker, whose handler sets the worker's stop signal only
    once. granian's ``WorkerSignal.set`` blocks, holding the GIL, when it is set a second time before
    the server has read it, as a second SIGTERM during the worker's start does (its parent's and a
    supervisor's, or its parent's death and its parent's): the worker then hangs for good, its own
    watchdog thread included. Installed as granian's before the workers are forked (``_server``)."""
    from granian._granian import WorkerSignal

    event = WorkerSignal()
    arrived: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        if not arrived:
            arrived.append(signum)
            event.set()

    for signum in lifetimes.STOP_SIGNALS:
        loop.add_signal_handler(signum, handler, signum, None)
    return event


def serve(settings: Settings, *, host: str | None, port: int | None, workers: int | None) -> int:
    """Serve until a stop signal; 0 after a stop asked for, at any point of the start."""
    parent = os.getppid()
    overrides = {k: v for k, v in (("host", host), ("port", port), ("workers", workers)) if v}
    settings = msgspec.structs.replace(settings, **overrides)
    settings, notices = settings.with_secrets()
    for line in notices:
        _say(line)
    preflight.check_port(settings.host, settings.port)
    with lifetimes.StopSignals() as signals:
        try:
            with database_for(settings, signals) as settings:
                assert settings.database_url is not None
                for line in preflight.check(settings, redis="optional", needed="the migrations' connection"):
                    _say(line)
                _say("migrating the database")
                preflight.migrate_database(settings.database_url)
                preflight.check_room(settings)
                _hand_over(settings)
                _say(f"serving on http://{settings.host}:{settings.port}")
                server = _server(settings)
                server.parent = parent
                try:
                    server.serve()
                finally:
                    if server.interrupt_signal:
                        lifetimes.ignore_stop_signals()
        except lifetimes.Stopped as stopped:
            _say(f"stopped by {stopped} before serving")
    lifetimes.end_quickly()
    return 0


def _hand_over(settings: Settings) -> None:
    """The environment granian's workers build their app from (``app.app_from_env``)."""
    assert settings.database_url is not None
    os.environ.update(
        {
            "DATABASE_URL": settings.database_url,
            "LOYALTY_ADMIN_TOKEN": settings.admin_token or "",
            "LOYALTY_JWT_SECRET": settings.jwt_secret or "",
            "LOYALTY_ENCRYPTION_KEY": settings.encryption_key or "",
            "LOYALTY_HOST": settings.host,
            "LOYALTY_PORT": str(settings.port),
            lifetimes.PARENT_ENV: str(os.getpid()),
        }
    )
    if settings.workers > 1 and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(_metrics_dir(settings.home, settings.port))


def _server(settings: Settings) -> Server:
    granian_signals.set_loop_signals = stop_signal_once  # read by each worker as it starts
    return Server(
        "loyalty_api.app:app_from_env",
        address=settings.host,
        port=settings.port,
        interface=Interfaces.ASGI,
        # named, not "auto": a missing uvloop fails the start instead of silently serving on asyncio's loop
        loop=Loops.uvloop,
        workers=settings.workers,
        factory=True,
        log_access=False,  # the app's access line names the route; granian's would repeat it
        log_level=LogLevels(settings.log_level.lower()),
        log_dictconfig=granian_logging(settings.log_format),
        workers_kill_timeout=STOP_GRACE_SECONDS,
        # one worker that dies is started again, instead of the server stopping every other (a
        # worker dying again within seconds of its restart still stops the server: it cannot work)
        respawn_failed_workers=True,
    )


def _metrics_dir(home: Path, port: int) -> Path:
    """An empty directory this server's processes share for /metrics, so a scrape answers the sum
    over all of them (prometheus-client's multiprocess mode); one per port, emptied at each start."""
    folder = home / f"metrics-{port}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder


def _say(line: str) -> None:
    print(f"loyalty: {line}", file=sys.stderr, flush=True)
