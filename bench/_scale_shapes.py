"""The plans of a few till calls read back from the server's log (``bench._scale_1m``'s tiers check;
``logged`` also gives ``bench._scale_measure`` its slow statements' plans).

With ``auto_explain.log_min_duration = 0`` on the clone, every statement a call runs is logged with
its plan; the calls of one vendor are logged between two offsets of the log, so each vendor's
statements are read back in order. A plan's shape is its nodes (type, relation, index) without
costs, times, rows or literals: the large vendor's shape of each statement is compared with the
small vendor's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_MARKER = re.compile(r"^\S+ \S+ \S+ \[\d+\] \S*@(\S+) LOG:  duration: ([\d.]+) ms  plan:$")
_NUMBERS = re.compile(r"\$\d+|'[^']*'|\b\d+(\.\d+)?\b")


@dataclass(frozen=True)
class Plan:
    query: str
    """The statement's first line, its numbers and parameters as ``?``."""
    ms: float
    shape: tuple[str, ...]
    text: str


def offset(log: Path) -> int:
    return log.stat().st_size if log.exists() else 0


def logged(log: Path, database: str, start: int, end: int | None = None) -> list[tuple[float, list[str]]]:
    """(ms, lines) of every plan auto_explain logged for ``database`` between two offsets of ``log``
    (to its end when ``end`` is None), in order."""
    if not log.exists():
        return []
    with log.open("rb") as f:
        f.seek(start)
        data = f.read() if end is None else f.read(max(0, end - start))
    lines = data.decode("utf-8", "replace").splitlines()
    out: list[tuple[float, list[str]]] = []
    n = 0
    while n < len(lines):
        found = _MARKER.match(lines[n])
        n += 1
        if not found or found.group(1) != database:
            continue
        body = []
        while n < len(lines) and lines[n].startswith(("\t", " ")):
            body.append(lines[n].strip("\t"))
            n += 1
        out.append((float(found.group(2)), body))
    return out


def plans_between(log: Path, start: int, end: int, database: str) -> list[Plan]:
    """Every plan auto_explain logged for ``database`` between the two offsets, in order."""
    out: list[Plan] = []
    for ms, body in logged(log, database, start, end):
        texts = [line.removeprefix("Query Text:").strip() for line in body[: _first_node(body)]]
        first = next((line for line in texts if line), "")
        query = re.sub(r"\s+", " ", _NUMBERS.sub("?", first))[:160]
        shape = tuple(_NUMBERS.sub("?", line.split("  (cost=")[0]).rstrip() for line in body if "(cost=" in line)
        out.append(Plan(query, ms, shape, "\n".join(body)))
    return out


def _first_node(body: list[str]) -> int:
    return next((n for n, line in enumerate(body) if "(cost=" in line), len(body))


@dataclass(frozen=True)
class Compared:
    call: str
    statements: int
    same: int
    differing: list[str]


def compare(call: str, large: list[Plan], small: list[Plan]) -> Compared:
    """Statement by statement in the order they ran: the same query with the same shape at both."""
    differing: list[str] = []
    same = 0
    for n in range(max(len(large), len(small))):
        big = large[n] if n < len(large) else None
        little = small[n] if n < len(small) else None
        if big is not None and little is not None and big.query == little.query and big.shape == little.shape:
            same += 1
        else:
            differing.append(big.query if big is not None else (little.query if little is not None else "?"))
    return Compared(call, max(len(large), len(small)), same, differing)


def written(label: str, plans: list[Plan]) -> str:
    """Each plan under its label, its statement's first line and its nodes (the query text left out)."""
    out = []
    for p in plans:
        lines = p.text.split("\n")
        out.append(f"-- {label}: {p.ms:.2f} ms\n{p.query}\n" + "\n".join(lines[_first_node(lines) :]) + "\n\n")
    return "".join(out)
