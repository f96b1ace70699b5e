"""Benchmarks: each module has ``run() -> str`` that measures and returns a Markdown report."""

import os
from pathlib import Path


def results_dir() -> Path:
    """Where reports and profiles go: ``BENCH_RESULTS_DIR`` when set (a scratch or CI smoke run),
    else bench/results; made if missing."""
    found = Path(os.environ.get("BENCH_RESULTS_DIR") or Path(__file__).parent / "results")
    found.mkdir(parents=True, exist_ok=True)
    return found
