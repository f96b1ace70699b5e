"""How long the service's processes live: none outlives the process that started it, and a stop
signal ends each of them at any point of its start.

A granian worker left behind by a killed ``loyalty serve`` keeps serving on the shared socket,
keeps its database connections and takes the queue's jobs with settings nobody runs any more. So
every worker asks the kernel for SIGTERM when its parent dies (Linux's ``PR_SET_PDEATHSIG``), checks
right after that its parent is still the one it was forked from (it may have died before the
request was made), and keeps a watchdog thread that notices the parent's death on any system and,
after a short grace for the stop the signal began, ends the process outright. That end is the
kernel's, not a Python thread's: on a loaded machine the watchdog, woken after its grace, waited
seconds for the interpreter lock the main thread held through its stop and the interpreter's own
finalization (measured: 2.3 to 3.8 s after the parent's ``kill -9``, at a load of 12), so it arms
a timer whose signal (SIGALRM, left at its default action) ends the process whatever its threads do.

Before granian installs its own handlers, SIGTERM and SIGINT raise ``Stopped`` (``StopSignals``),
so a stop during the migrations or while the embedded PostgreSQL starts unwinds through the
``finally`` that stops that PostgreSQL, instead of killing the process where it stands.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from types import FrameType
from typing import Any

PR_SET_PDEATHSIG = 1
"""prctl(2): the signal the calling process gets when the thread that forked it ends."""
WATCH_SECONDS = 0.05
"""How often the watchdog asks who the parent is (one system call)."""
ORPHAN_GRACE_SECONDS = 0.75
"""How long an orphaned worker's own stop may take before the watchdog ends the process: together
with ``WATCH_SECONDS`` and a busy machine's delays it stays inside the 2 seconds OPS-8 allows."""
PARENT_ENV = "LOYALTY_PARENT_PID"
"""The pid a granian worker must find as its parent: set by ``loyalty serve`` before granian forks
its workers, so a worker whose parent died before it could ask the kernel still notices."""

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
RESEND_SECONDS = 0.05
"""How long after a stop lost in a callback it is sent again (``StopSignals._swallowed``)."""


class Stopped(BaseException):
    """A stop signal arrived before the process began to serve; the ``finally`` blocks on the way
    out release what the start had taken (a BaseException, so no ``except Exception`` swallows it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def die_with_parent(
    parent: int | None = None, *, grace: float | None = ORPHAN_GRACE_SECONDS, ask_kernel: bool = True
) -> None:
    """End this process when ``parent`` (default: the current parent) dies: SIGTERM at once where the
    kernel can send it, else within ``WATCH_SECONDS`` from the watchdog; then, with a ``grace``, the
    process ends outright that long after, whatever its stop is doing. ``grace=None`` leaves the stop
    to the process (``loyalty serve``'s main process stops its embedded PostgreSQL on the way).

    The kernel's signal follows the thread that started the process, not the process: a command
    started from a helper thread of its parent would be stopped when that thread ends. So a command
    (``ask_kernel=False``) relies on the watchdog alone; a granian worker, forked by granian's main
    thread, has both."""
    parent = os.getppid() if parent is None else parent
    if ask_kernel:
        _ask_kernel(signal.SIGTERM)
    if grace is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGALRM, signal.SIG_DFL)  # the deadline's signal ends the process (``_end_in``)
    threading.Thread(target=_watch, args=(parent, grace), name="parent-watchdog", daemon=True).start()


def parent_from_env() -> int | None:
    """The pid ``loyalty serve`` recorded for its workers (``PARENT_ENV``), if this is one of them."""
    raw = os.environ.get(PARENT_ENV, "")
    return int(raw) if raw.isdigit() else None


def _ask_kernel(signum: int) -> bool:
    """Whether the kernel will send ``signum`` when the parent dies (Linux only)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # the running program's symbols, libc's among them
        return bool(libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _watch(parent: int, grace: float | None) -> None:
    # the first look comes right after the kernel was asked: a parent that died before sends nothing
    while os.getppid() == parent:
        time.sleep(WATCH_SECONDS)
    if grace is not None:
        _end_in(grace)  # first: from here on no lock, no scheduling of this thread, can delay the end
    # the kernel's signal may be under way already; a second SIGTERM changes nothing in a stop begun
    os.kill(os.getpid(), signal.SIGTERM)
    if grace is not None:
        time.sleep(grace)
        os._exit(1)  # where the timer's signal was taken over after all


def _end_in(seconds: float) -> None:
    """The kernel ends this process ``seconds`` from now: ``ITIMER_REAL`` sends SIGALRM, whose default
    action ends every thread at once, without the interpreter lock (nothing here handles SIGALRM:
    ``die_with_parent`` put its default back). A job cut short is run again (OPS-8)."""
    with contextlib.suppress(OSError, ValueError):
        signal.setitimer(signal.ITIMER_REAL, seconds)


def end_quickly() -> None:
    """For a command whose work is done and which only has to exit: the interpreter's last garbage
    collections, over everything the web framework, the database toolkit and the migrations
    imported, took 1.5 to 2 s of a loaded machine after the stop itself had finished (py-spy: the
    main thread in ``gc_collect_main`` with no Python frame left). Frozen objects are left out of
    those collections; the process's end frees its memory anyway (OPS-9's 5 seconds)."""
    gc.freeze()


_stopping: list[bool] = []
"""Not empty once the process ignores stop signals for good (``ignore_stop_signals``)."""


def ignore_stop_signals() -> None:
    """For a command that is ending because it was asked to stop: a further SIGTERM or SIGINT
    (a supervisor's second, a terminal's Ctrl-C) must not cut its last steps short, nor turn its
    clean exit into death by a signal."""
    _stopping.append(True)
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)


class StopSignals:
    """While this lasts, the first SIGTERM or SIGINT raises ``Stopped`` in the main thread, and any
    later one is ignored: it must not cut short the clean-up the first one began. The handlers in
    place before are put back at the end (granian installs its own in between, as it serves)."""

    def __init__(self) -> None:
        self.arrived: int | None = None
        self._raised = False
        self._holding = False
        self._previous: dict[int, object] = {}
        self._unraisable = sys.unraisablehook

    def __enter__(self) -> StopSignals:
        for signum in STOP_SIGNALS:
            self._previous[signum] = signal.getsignal(signum)
            signal.signal(signum, self._handle)
        self._unraisable = sys.unraisablehook
        sys.unraisablehook = self._swallowed
        return self

    def __exit__(self, *exc: object) -> None:
        sys.unraisablehook = self._unraisable
        if self.arrived is not None or _stopping:
            ignore_stop_signals()
            return
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]  # what getsignal answered

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.arrived is not None:
            return
        self.arrived = signum
        if not self._holding:
            self._raised = True
            raise Stopped(signum)

    def _swallowed(self, unraisable: Any) -> None:
        """A ``Stopped`` raised while the main thread ran a callback whose exceptions Python only
        reports (a weak reference's, such as importlib's module locks', during an import) never
        unwinds: the stop was lost, and the command started on to serve (seen on a loaded machine).
        Such a stop is sent again a moment later (from a thread: sent from here, it would be handled
        here), to be raised once the callback has returned, where it unwinds."""
        stopped = unraisable.exc_value
        if isinstance(stopped, Stopped) and self.arrived is not None and self._raised:
            self.arrived = None
            self._raised = False
            threading.Timer(RESEND_SECONDS, os.kill, (os.getpid(), stopped.signum)).start()
            return
        self._unraisable(unraisable)

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """A signal arriving while this lasts is raised when it ends, not in the middle: for a step
        that must not be cut in two (starting a server whose handle is needed to stop it)."""
        self._holding = True
        try:
            yield
        finally:
            self._holding = False
        if self.arrived is not None and not self._raised:
            self._raised = True
            raise Stopped(self.arrived)
