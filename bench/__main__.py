"""``python -m bench [name ...]``: run the benchmarks and record their reports in bench/results/.

``python -m bench <name> --option ...`` runs one benchmark with its options (``request-path --help``).
A name may be written with hyphens; the report is ``bench/results/<name-with-hyphens>.md``."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

HERE = Path(__file__).parent


def main(names: list[str]) -> int:
    # the service's JSON logging at WARNING: no per-request access line in the measured figures
    from loyalty_api.logs import configure_logging

    configure_logging("WARNING")
    from bench import _cluster, results_dir

    if _cluster.wanted():
        # before any benchmark module reads LOYALTY_BENCH_DATABASE_URL
        _cluster.start()
    modules = sorted(m.name for m in pkgutil.iter_modules([str(HERE)]) if not m.name.startswith("_"))
    first_option = next((n for n, arg in enumerate(names) if arg.startswith("-")), len(names))
    names, options = names[:first_option], names[first_option:]
    if options and len(names) != 1:
        print("bench: options go with exactly one benchmark name", file=sys.stderr)
        return 2
    chosen = [name.replace("-", "_") for name in names] or modules
    unknown = sorted(set(chosen) - set(modules))
    if unknown:
        print(f"bench: no benchmark named {', '.join(unknown)}; have {', '.join(modules)}", file=sys.stderr)
        return 2
    for name in chosen:
        print(f"bench: running {name} ...", flush=True)
        module = importlib.import_module(f"bench.{name}")
        report = module.run(options) if options else module.run()
        out = results_dir() / f"{name.replace('_', '-')}.md"
        out.write_text(report)
        print(report)
        print(f"bench: recorded {out}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
