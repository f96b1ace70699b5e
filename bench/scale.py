"""A year of data: every path measured on one large vendor against a small vendor of the same run.

``just bench scale`` builds (once: ``bench._scale_build``'s template) a deployment of one large vendor
(by default 1,000,000 customers, 20,000,000 ledger entries over 13 months, 5,000,000 purchases with
their lines, 500,000 redemptions, 2,000,000 events) and 200 small ones, checks it against the rule
book (``bench._scale_check``), clones it, then serves the clone with ``loyalty serve`` (granian, as
deployed) and measures the till, the admin and portal reads, the events feed, ``/metrics``, the
health check and the jobs on the large vendor and on a small one (``bench._scale_measure``).
``--build-only`` stops after the template (CI's ``just scale-small``).
"""

from __future__ import annotations

import argparse
import time

from bench._scale_build import clone, ensure_template
from bench._scale_sizes import add_options, sizes_of
from bench._support import scratch_name


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench scale", description=(__doc__ or "").split("\n\n")[0])
    add_options(parser)
    parser.add_argument("--build-only", action="store_true", help="build (or find) the template, then stop")
    parser.add_argument("--rebuild", action="store_true", help="drop this size's template first and build it anew")
    parser.add_argument("--requests", type=int, default=200, help="requests per measured call (default 200)")
    parser.add_argument("--workers", type=int, default=1, help="granian workers of the served clone (default 1)")
    parser.add_argument("--skip-jobs", action="store_true", help="measure the requests only, not the jobs")
    parser.add_argument(
        "--leave-out",
        action="append",
        default=[],
        metavar="CALL",
        help="a call not to measure, by its function's name in bench._scale_calls (admin_last_page); repeatable",
    )
    parser.add_argument("--job-limit", type=int, default=300, help="seconds a job may run before it is stopped (300)")
    return parser.parse_args(argv)


def say(line: str) -> None:
    print(line, flush=True)


def run(argv: list[str] | None = None) -> str:
    options = _options(argv or [])
    sizes = sizes_of(options)
    began = time.monotonic()
    template, behind = ensure_template(sizes, say, rebuild=options.rebuild)
    ready = time.monotonic() - began
    if options.build_only:
        return f"# Scale data\n\nTemplate `{template}` ready in {ready:.0f} s for {sizes}.\n"
    from bench._scale_measure import measure

    name = scratch_name("loyalty_scale")
    cloned_at = time.monotonic()
    url = clone(template, name)
    took = time.monotonic() - cloned_at
    say(f"scale: cloned {template} in {took:.1f} s")
    migrated = None
    if behind:
        from loyalty_api.migrate import upgrade

        began = time.monotonic()
        upgrade(url.replace("postgresql://", "postgresql+psycopg://", 1))
        migrated = time.monotonic() - began
        say(f"scale: migrated the clone to this schema in {migrated:.1f} s")
    return measure(url, sizes, options, template=template, clone_s=took, build_s=ready, migrated_s=migrated)
