"""A probe of the cyclic garbage collector's pauses in every Python process a bench starts.

Put this folder on ``PYTHONPATH`` and each interpreter loads it at start (``sitecustomize``); a
forked granian worker inherits it. Every collection of the two older generations, and any other
that took over 2 ms, appends a line to ``$BENCH_GC_LOG.<pid>`` (default ``/tmp/bench-gc.<pid>``):
the time, the program, the generation, its pause in ms, what it freed and, for a full collection,
how many objects the collector still tracks (counted after the pause was measured).

    PYTHONPATH=bench/gc_probe uv run python -m bench request-path --calls lookup --workers 1
"""

from __future__ import annotations

import gc
import os
import sys
import time
from typing import Any

_started: list[float] = [0.0]


def _record(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _started[0] = time.perf_counter()
        return
    pause = (time.perf_counter() - _started[0]) * 1000
    generation = info["generation"]
    if generation == 0 and pause <= 2:
        return
    tracked = len(gc.get_objects()) if generation == 2 else ""
    program = sys.argv[0].rsplit("/", 3)[-3:] if sys.argv and sys.argv[0] else ["?"]
    path = f"{os.environ.get('BENCH_GC_LOG', '/tmp/bench-gc')}.{os.getpid()}"
    with open(path, "a") as log:
        log.write(
            f"{time.time():.3f} {'/'.join(program)} gen{generation} {pause:.2f}ms "
            f"collected={info['collected']} tracked={tracked}\n"
        )


gc.callbacks.append(_record)


IDLE = frozenset({"run_until_complete", "run_forever", "_spawn_asgi_lifespan_worker", "_spawn_asgi_worker"})
"""Functions whose frame is innermost while the event loop waits in native code: idle, not stalled."""


def _watch_main_thread(threshold_ms: float) -> None:
    """Every 5 ms, the main thread's innermost frame: one that stays put for ``threshold_ms`` (a
    synchronous call holding the event loop) is logged with its stack, as is a gap between two looks
    longer than that (the GIL held all along: a collection, a C call that does not release it)."""
    import threading
    import traceback

    main = threading.main_thread().ident
    path = f"{os.environ.get('BENCH_GC_LOG', '/tmp/bench-gc')}.{os.getpid()}"

    def watch() -> None:
        held: tuple[int, int] | None = None
        since = last = time.perf_counter()
        logged = False
        while True:
            time.sleep(0.005)
            now = time.perf_counter()
            if (now - last) * 1000 > threshold_ms:
                with open(path, "a") as log:
                    log.write(f"{time.time():.3f} gil-gap {(now - last) * 1000:.1f}ms\n")
            last = now
            frame = sys._current_frames().get(main or 0)
            if frame is None or frame.f_code.co_name in IDLE:
                held, logged = None, False
                continue
            key = (id(frame), frame.f_lasti)
            if key != held:
                held, since, logged = key, now, False
            elif not logged and (now - since) * 1000 > threshold_ms:
                logged = True
                stack = "".join(traceback.format_stack(frame)[-12:])
                with open(path, "a") as log:
                    log.write(f"{time.time():.3f} stalled {(now - since) * 1000:.0f}ms in\n{stack}\n")

    threading.Thread(target=watch, name="bench-stall-probe", daemon=True).start()


if os.environ.get("BENCH_STALL_MS"):
    # started in each process that runs the app: granian forks its workers after this module ran,
    # and a thread does not survive a fork, so the worker starts its own when it imports the app
    _threshold = float(os.environ["BENCH_STALL_MS"])
    os.register_at_fork(after_in_child=lambda: _watch_main_thread(_threshold))
    _watch_main_thread(_threshold)
