"""Benchmarks: each module has ``run() -> str`` that measures and returns a Markdown report."""
