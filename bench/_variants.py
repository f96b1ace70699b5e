"""One service, several configurations of the till's data side by side (a vendor with a ladder and
one without, pending days 0 and 30, customers with and without pass devices), measured in
alternating rounds on the bench's own cluster (``bench._cluster``): per run, wrk's rate and
latencies, the CPU of the server and of the database's backends (``_load.CpuWatch``) and what
PostgreSQL did (``_pgstats.Watch``: statements sent, rows written, index and sequential scans).

The configurations share the server, the database and the machine's load; the rounds alternate
their order (``_load.order``), so the ratios of runs made back to back are the figures to read.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import psycopg

from bench import _load, _pgstats, _profile, _servers, earning, results_dir

SCRIPTS = {"transaction": earning.LUA, "lookup": _load.LUA}
CALLS = {
    "transaction": earning.CALLS["transaction"],
    "lookup": "`GET /api/v1/customers/lookup?identifier=<card>`",
}


@dataclass(frozen=True)
class Variant:
    name: str
    customers: Path
    """The wrk scripts' customers file (``_servers.write_customers``)."""
    token: str


@dataclass(frozen=True)
class Run:
    round_no: int
    call: str
    variant: str
    wrk: _load.WrkResult
    server_cpu: float
    """Percent of one core, the server's processes together."""
    database_cpu: float
    cost: _pgstats.Cost
    load1: float

    def per(self, n: float) -> float:
        return n / max(self.wrk.requests, 1)

    @property
    def statements(self) -> float:
        """Statements the clients sent per request (top level: a foreign key's check is not one)."""
        return self.per(sum(s.calls for s in self.cost.statements if s.toplevel))

    @property
    def server_ms(self) -> float:
        return 10 * self.server_cpu / max(self.wrk.rate, 1e-9)

    @property
    def database_ms(self) -> float:
        return 10 * self.database_cpu / max(self.wrk.rate, 1e-9)


def add_options(parser: argparse.ArgumentParser, *, duration: float = 10, rounds: int = 2) -> None:
    parser.add_argument("--duration", type=float, default=duration, help="seconds of measured load per run")
    parser.add_argument("--warmup", type=float, default=3, help="seconds of unmeasured load before each run")
    parser.add_argument("--connections", type=int, default=16, help="wrk connections")
    parser.add_argument("--rounds", type=int, default=rounds, help="runs of each configuration, the order alternating")
    parser.add_argument("--workers", type=int, default=2, help="server processes")
    parser.add_argument("--customers", type=int, default=400, help="customers of each configuration's vendor")
    parser.add_argument("--profile", action="store_true", help="py-spy one service worker per configuration, after")


def set_up(options: argparse.Namespace, database: str, name: str) -> _load.Bench:
    """``_load.Bench`` with ``pg_stat_statements`` in its scratch database: what PostgreSQL did is
    half of what these benches compare."""
    bench = _load.Bench(options, database, name)
    _pgstats.ensure_extension(bench.plain)
    return bench


def measure(
    options: argparse.Namespace,
    server: _servers.Server,
    database: str,
    url: str,
    call: str,
    variant: Variant,
    prefix: str,
) -> tuple[_load.WrkResult, float, float, _pgstats.Cost, float]:
    """One run: ``options.warmup`` seconds unmeasured, then the measured wrk run inside both watches."""
    script = SCRIPTS[call]
    connections = options.connections
    if options.warmup > 0:
        warm = prefix + "-w"
        _load.wrk(server.url, call, variant.customers, variant.token, warm, options.warmup, connections, script=script)
    time.sleep(_load.STATS_FLUSH_SECONDS)  # the warm-up's statistics are flushed before the window opens
    load1 = os.getloadavg()[0]
    with (
        psycopg.connect(url, autocommit=True) as conn,
        psycopg.connect(url, autocommit=True) as sampler,
        psycopg.connect(url, autocommit=True) as cpu_conn,
        _pgstats.Watch(conn, sampler) as watch,
    ):
        with _load.CpuWatch(server.process.pid, cpu_conn, database) as cpu:
            result = _load.wrk(
                server.url, call, variant.customers, variant.token, prefix, options.duration, connections, script=script
            )
        time.sleep(_load.STATS_FLUSH_SECONDS)  # the run's last statistics reach the counters read on exit
    return result, cpu.percent("server"), cpu.percent("database"), watch.cost, load1


def rounds(
    options: argparse.Namespace,
    server: Callable[[], _servers.Server],
    database: str,
    url: str,
    calls: Sequence[str],
    variants: Sequence[Variant],
    *,
    between: Callable[[str], None] | None = None,
) -> list[Run]:
    """``options.rounds`` rounds of every call at every variant, the variants' order alternating;
    one server (started by ``server``) for them all. ``between(variant)`` runs before a variant's
    run (a setting the variants share to be put as that variant wants it)."""
    runs: list[Run] = []
    names = [v.name for v in variants]
    by_name = {v.name: v for v in variants}
    started = server()
    try:
        for round_no in range(options.rounds):
            for call in calls:
                for name in _load.order(round_no, names):
                    print(f"bench: round {round_no + 1}, {call}, {name}", flush=True)
                    if between is not None:
                        between(name)
                    prefix = f"r{round_no}-{call}-{re.sub(r'[^a-z0-9]', '', name)}"
                    measured = measure(options, started, database, url, call, by_name[name], prefix)
                    runs.append(Run(round_no, call, name, *measured))
    finally:
        started.stop()
    return runs


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def medians(runs: Sequence[Run], call: str, variant: str) -> dict[str, float]:
    """The medians over the rounds of one call at one variant."""
    got = [r for r in runs if r.call == call and r.variant == variant]
    return {
        "rate": median([r.wrk.rate for r in got]),
        "p50": median([r.wrk.p50_ms for r in got]),
        "p99": median([r.wrk.p99_ms for r in got]),
        "server_ms": median([r.server_ms for r in got]),
        "database_ms": median([r.database_ms for r in got]),
        "statements": median([r.statements for r in got]),
        "rows": median([r.per(r.cost.rows_written) for r in got]),
        "index_scans": median([r.per(r.cost.index_scans) for r in got]),
        "seq_scans": median([r.per(r.cost.seq_scans) for r in got]),
        "errors": float(sum(sum(r.wrk.errors.values()) for r in got)),
    }


def table(runs: Sequence[Run], calls: Sequence[str], variants: Sequence[str]) -> list[str]:
    """The medians of the rounds per call and variant, then every run in the order run."""
    lines = [
        "| call | configuration | req/s | p50 ms | p99 ms | server CPU ms/req | PG CPU ms/req | statements/req"
        " | rows written/req | index scans/req | seq scans/req | errors |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for call in calls:
        for name in variants:
            m = medians(runs, call, name)
            lines.append(
                f"| {call} | {name} | {m['rate']:,.0f} | {m['p50']:.1f} | {m['p99']:.1f} | {m['server_ms']:.2f}"
                f" | {m['database_ms']:.2f} | {m['statements']:.2f} | {m['rows']:.2f} | {m['index_scans']:.2f}"
                f" | {m['seq_scans']:.3f} | {m['errors']:.0f} |"
            )
    lines += ["", "Every run, in the order run (load1: the 1-minute load average as the run began):", ""]
    lines += [
        "| round | call | configuration | req/s | p50 ms | p99 ms | server CPU ms/req | statements/req"
        " | rows written/req | load1 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        lines.append(
            f"| {r.round_no + 1} | {r.call} | {r.variant} | {r.wrk.rate:,.0f} | {r.wrk.p50_ms:.1f}"
            f" | {r.wrk.p99_ms:.1f} | {r.server_ms:.2f} | {r.statements:.2f} | {r.per(r.cost.rows_written):.2f}"
            f" | {r.load1:.2f} |"
        )
    return lines


def _query(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()[:140].replace("|", "\\|")


def statement_mix(
    runs: Sequence[Run], call: str, variants: Sequence[str], *, floor: float = 0.02
) -> tuple[list[str], dict[str, set[str]]]:
    """The statements the clients sent per request of one call, side by side for each variant (their
    calls over all rounds per request, and their execution time per request), those under ``floor``
    per request at every variant left out (the job worker's polls); and the set of statements each
    variant sent at least ``floor`` times a request, to tell whether two variants sent the same ones."""
    calls: dict[str, dict[str, float]] = {}
    spent: dict[str, dict[str, float]] = {}
    for name in variants:
        got = [r for r in runs if r.call == call and r.variant == name]
        requests = max(sum(r.wrk.requests for r in got), 1)
        for r in got:
            for s in r.cost.statements:
                if s.toplevel:
                    by, ms = calls.setdefault(_query(s.query), {}), spent.setdefault(_query(s.query), {})
                    by[name] = by.get(name, 0.0) + s.calls / requests
                    ms[name] = ms.get(name, 0.0) + s.total_ms / requests
    kept = {q: by for q, by in calls.items() if max(by.values()) >= floor}
    sets = {name: {q for q, by in kept.items() if by.get(name, 0.0) >= floor} for name in variants}
    lines = [
        "| "
        + " | ".join(f"{name} calls/req" for name in variants)
        + " | "
        + " | ".join(f"{name} exec ms/req" for name in variants)
        + " | statement |",
        "|" + "---|" * (2 * len(variants) + 1),
    ]
    for q, by in sorted(kept.items(), key=lambda item: -max(item[1].values())):
        lines.append(
            "| "
            + " | ".join(f"{by.get(name, 0.0):.2f}" for name in variants)
            + " | "
            + " | ".join(f"{spent[q].get(name, 0.0):.3f}" for name in variants)
            + f" | `{q}` |"
        )
    return lines, sets


def rows_by_table(runs: Sequence[Run], call: str, variants: Sequence[str], *, floor: float = 0.01) -> list[str]:
    """Rows written per request of one call by table, side by side for each variant (all rounds)."""
    rows: dict[str, dict[str, float]] = {}
    for name in variants:
        got = [r for r in runs if r.call == call and r.variant == name]
        requests = max(sum(r.wrk.requests for r in got), 1)
        for r in got:
            for table, n in r.cost.table_rows.items():
                by = rows.setdefault(table, {})
                by[name] = by.get(name, 0.0) + n / requests
    lines = ["| table | " + " | ".join(variants) + " |", "|---|" + "---|" * len(variants)]
    for table, by in sorted(rows.items(), key=lambda item: -max(item[1].values())):
        if max(by.values()) >= floor:
            lines.append(f"| {table} | " + " | ".join(f"{by.get(name, 0.0):.2f}" for name in variants) + " |")
    return lines


def profiles(
    options: argparse.Namespace,
    server: Callable[[], _servers.Server],
    call: str,
    variants: Sequence[Variant],
    bench: str,
    needles: Sequence[str],
) -> list[str]:
    """py-spy one worker of a fresh server on ``call`` at each variant (``_profile.profile_calls``),
    then the part of each profile's samples spent in or below the files that contain each of
    ``needles``. ``server`` is best one of a single process, so that the profile sees every request."""
    lines: list[str] = []
    shares: dict[str, list[float]] = {}
    for variant in variants:
        slug = re.sub(r"[^a-z0-9]+", "-", variant.name.lower()).strip("-")
        chosen = argparse.Namespace(**{**vars(options), "calls": [call]})
        found = _profile.profile_calls(
            chosen,
            server,
            variant.token,
            lambda *_, data=variant.customers: data,
            bench=f"{bench}-{slug}",
            calls={call: f"{CALLS[call]}, {variant.name}"},
            script=SCRIPTS[call],
        )
        lines += found[2:]  # below the heading, which the caller writes
        collapsed = results_dir() / f"{bench}-{slug}-{call}.collapsed.txt"
        shares[variant.name] = [_profile.share(collapsed, needle) for needle in needles]
    lines += [
        "Samples in or below these files, per profile:",
        "",
        "| files | " + " | ".join(v.name for v in variants) + " |",
        "|---|" + "---|" * len(variants),
    ]
    for n, needle in enumerate(needles):
        lines.append(f"| `{needle}` | " + " | ".join(f"{100 * shares[v.name][n]:.1f}%" for v in variants) + " |")
    return [*lines, ""]
