"""Where a server worker's time goes: py-spy records one process while the load runs, and its
collapsed stacks are summed per function (own time: the function itself is running; total time: it
is anywhere on the stack) and per library.

py-spy is not a project dependency (a native profiler has no place in the service's lock); it runs
through ``uvx py-spy``, which fetches it into uv's tool cache on first use. The collapsed-stack file
it writes opens in https://www.speedscope.app (and in any flame-graph tool that reads Brendan
Gregg's format).
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench import _load, results_dir
from bench._load import Data
from bench._servers import Server

_FRAME = re.compile(r"^(?P<name>.*) \((?P<file>[^()]*)\)$")


def record(pid: int, seconds: float, out: Path) -> subprocess.Popen[bytes]:
    """Start recording ``pid`` for ``seconds``; the caller runs the load, then waits on the answer."""
    argv = ["uvx", "py-spy", "record", "--pid", str(pid), "--duration", str(round(seconds))]
    argv += ["--rate", "250", "--nonblocking", "--nolineno", "--format", "raw", "--output", str(out)]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def finish(recording: subprocess.Popen[bytes], seconds: float) -> None:
    _, err = recording.communicate(timeout=seconds + 120)
    if recording.returncode != 0:
        raise RuntimeError(f"py-spy failed: {err.decode(errors='replace')}")


NO_FRAME = "(no Python frame)"

# frames every request sits under: the process start, granian's worker and the service's CLI
TRUNK = frozenset({"runpy", "granian", "multiprocessing", "loyalty_api/cli"})


def _library(file: str) -> str:
    """The top-level package or module of a frame's file (py-spy names files from their sys.path
    entry: ``psycopg/_cursor_base.py``, ``typing.py``, ``<frozen runpy>``)."""
    file = file.strip("<>").removeprefix("frozen ")
    if file == "loyalty_api/cli.py":
        return "loyalty_api/cli"
    return file.replace("\\", "/").split("/")[0].removesuffix(".py")


def _label(frame: str) -> tuple[str, str]:
    """``(function and file, library)`` of a py-spy frame ``name (file)``."""
    found = _FRAME.match(frame)
    if found is None:
        return frame, "?"
    return f"{found['name']} ({found['file']})", _library(found["file"])


@dataclass(frozen=True)
class Profile:
    samples: int
    own: list[tuple[str, int]]
    total: list[tuple[str, int]]
    libraries: list[tuple[str, int]]


def shown(out: Path) -> str:
    """A stacks file as a report names it: from the repository's root when it lies inside it."""
    return str(out.relative_to(Path.cwd())) if out.is_relative_to(Path.cwd()) else str(out)


def summarise(collapsed: Path, top: int = 15) -> Profile:
    """Top functions by own and by total samples; the ``TRUNK`` frames are left out of the total
    list. SQLAlchemy's awaits run in greenlets, which py-spy shows as stacks of their own: a
    function's total there counts the part of its time spent in its greenlet."""
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    libraries: Counter[str] = Counter()
    samples = 0
    for line in collapsed.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        count = int(count_text)
        samples += count
        if not stack:
            # the worker's thread on a CPU with no Python frame: granian's Rust side, or runnable
            # and waiting for a core on a busy machine
            own[NO_FRAME] += count
            libraries[NO_FRAME] += count
            continue
        frames = [_label(f) for f in stack.split(";") if f]
        # the thread name py-spy puts first is not a frame
        frames = [f for f in frames if f[1] != "?"] or frames
        leaf, library = frames[-1]
        own[leaf] += count
        libraries[library] += count
        for name in {name for name, library in frames if library not in TRUNK}:
            total[name] += count
    return Profile(samples, own.most_common(top), total.most_common(top), libraries.most_common())


def share(collapsed: Path, needle: str) -> float:
    """The part of the samples (0 to 1) whose stack holds a frame whose file contains ``needle``
    (``loyalty_core/tiers/``: the time spent in or below that package)."""
    hit = samples = 0
    for line in collapsed.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        samples += int(count_text)
        if needle in stack:
            hit += int(count_text)
    return hit / max(samples, 1)


def markdown(title: str, profile: Profile, file: str) -> list[str]:
    def pct(n: int) -> str:
        return f"{100 * n / max(profile.samples, 1):.1f}%"

    lines = [f"#### {title}", "", f"{profile.samples} samples (250 Hz, CPU only); stacks in `{file}`.", ""]
    lines += ["Own time by library:", "", "| library | own |", "|---|---|"]
    lines += [f"| {name} | {pct(n)} |" for name, n in profile.libraries[:10]]
    lines += ["", "Top functions by own time:", "", "| function | own |", "|---|---|"]
    lines += [f"| `{name}` | {pct(n)} |" for name, n in profile.own]
    lines += [
        "",
        "Top functions by total time (below the server's entry points):",
        "",
        "| function | total |",
        "|---|---|",
    ]
    lines += [f"| `{name}` | {pct(n)} |" for name, n in profile.total]
    return [*lines, ""]


def profile_calls(
    options: argparse.Namespace,
    start: Callable[[], Server],
    token: str,
    data: Data,
    *,
    bench: str,
    calls: dict[str, str],
    script: Path,
    extra: tuple[str, ...] = (),
) -> list[str]:
    """py-spy one worker of a fresh service for ``options.duration`` seconds of each call's load,
    after ``options.warmup`` seconds of it; the stacks go to ``bench/results/<bench>-<call>.collapsed.txt``."""
    lines = ["## Where the time goes (py-spy, one service worker)", ""]
    for call in options.calls:
        print(f"bench: profiling the service on {call}", flush=True)
        service = start()
        out = results_dir() / f"{bench}-{call}.collapsed.txt"
        try:
            workers = [pid for pid in _load.process_tree(service.process.pid) if pid != service.process.pid]
            if options.warmup > 0:
                warm = data(call, f"pw-{call}", options.warmup)
                _load.wrk(
                    service.url,
                    call,
                    warm,
                    token,
                    f"pw-{call}",
                    options.warmup,
                    options.connections,
                    script=script,
                    extra=extra,
                )
            measured = data(call, f"p-{call}", options.duration)
            recording = record(workers[0] if workers else service.process.pid, options.duration, out)
            _load.wrk(
                service.url,
                call,
                measured,
                token,
                f"p-{call}",
                options.duration,
                options.connections,
                script=script,
                extra=extra,
            )
            finish(recording, options.duration)
        finally:
            service.stop()
        lines += markdown(f"{call}: {calls[call]}", summarise(out), shown(out))
    return lines
