"""The till's statements by name, each with the typed parameters it takes, and their checked-in text.

A till module composes its statements once, at import, and names each one in its module's
:class:`Statements` (``SQL = statements_of(__name__)``, then ``WRITE = SQL("write", text, WriteParams)``).
The full text of every statement of a module is checked in beside it as ``<module>.sql``
(``earning/till_purchase_write.py`` beside ``earning/till_purchase_write.sql``), each statement under
a ``-- name: <statement>`` header, so a reviewer reads and diffs a statement whole, whatever CTEs
other modules lend it. ``tests/core/test_till_statements.py`` fails when a file differs from what the
code composes; ``python -m loyalty_core.till_sql`` (``just till-sql``) rewrites the files after a
deliberate change.

A statement's parameters are one :class:`Params` struct whose fields are its placeholders, named in
words, built once per request; :func:`bound` hands it to psycopg, which takes named placeholders
from a mapping only. ``msgspec.structs.asdict`` builds that dict in C from the struct's slots, the
cheapest way from a struct to a mapping (a struct that were itself a ``Mapping`` would cost psycopg a
Python call per value), and psycopg reads a plain ``dict`` on its fastest path.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

__all__ = [
    "Params",
    "Statement",
    "Statements",
    "bound",
    "placeholders",
    "registered",
    "render",
    "snapshot_of",
    "stale_snapshots",
    "statements_of",
]

PLACEHOLDER = re.compile(r"%\((\w+)\)s")


class Params(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """The parameters of a till statement: one field per placeholder, named as the placeholder.
    Subclasses inherit ``gc=False`` (no cycle can form through a statement's values, so the cycle
    collector need not track them) and say ``frozen=True`` again, which is inherited too but what
    the type checker reads."""


bound: Callable[[Params], dict[str, Any]] = msgspec.structs.asdict
"""The mapping psycopg binds a statement's named placeholders from: a new dict of the struct's
fields (the C function itself, so handing parameters over costs no Python frame)."""


@dataclass(frozen=True, slots=True)
class Statement:
    name: str
    text: str
    params: tuple[type[Params], ...]
    """The struct (or structs, merged into one mapping) whose fields its placeholders name."""


class Statements:
    """A module's till statements, in the order it names them."""

    def __init__(self, module: str) -> None:
        self.module = module
        self.named: dict[str, Statement] = {}

    def __call__(self, name: str, text: str, *params: type[Params]) -> str:
        """Name ``text`` (composed by the caller, at import) and return it unchanged."""
        if name in self.named:
            raise ValueError(f"{self.module} names two statements {name!r}")
        self.named[name] = Statement(name, text, params)
        return text

    def __iter__(self) -> Iterator[Statement]:
        return iter(self.named.values())


_REGISTRY: dict[str, Statements] = {}


def statements_of(module: str) -> Statements:
    """The till statements of ``module`` (its ``__name__``), to name them in; checked in beside it."""
    found = _REGISTRY.get(module)
    if found is None:
        found = _REGISTRY[module] = Statements(module)
    return found


def placeholders(text: str) -> frozenset[str]:
    return frozenset(PLACEHOLDER.findall(text))


def registered() -> dict[str, Statements]:
    """Every module of ``loyalty_core`` that names till statements, by module name: each module is
    imported first, so none is missed for not having been imported yet."""
    import loyalty_core

    for module in pkgutil.walk_packages(loyalty_core.__path__, "loyalty_core."):
        importlib.import_module(module.name)
    return dict(sorted(_REGISTRY.items()))


def snapshot_of(module: str) -> Path:
    """Where the module's statements are checked in: beside it, as ``<module>.sql``."""
    source = sys.modules[module].__file__
    assert source is not None
    return Path(source).with_suffix(".sql")


def render(statements: Statements) -> str:
    """The ``.sql`` file of a module's statements: each under its name and its parameters' struct."""
    blocks = []
    for statement in statements:
        structs = ", ".join(p.__name__ for p in statement.params)
        blocks.append(f"-- name: {statement.name}\n-- params: {structs}\n{statement.text.strip()};\n")
    return "\n".join(blocks)


def main() -> None:
    """Rewrite every module's ``.sql`` file from what the code composes, and remove the files of
    modules that no longer name statements."""
    modules = registered()
    for module, statements in modules.items():
        path = snapshot_of(module)
        text = render(statements)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    for stale in stale_snapshots(modules):
        stale.unlink()
        print(f"removed {stale}")


def stale_snapshots(modules: dict[str, Statements]) -> list[Path]:
    """``.sql`` files beside a module of the package that names no statements."""
    wanted = {snapshot_of(module) for module in modules}
    found = Path(__file__).parent.rglob("*.sql")
    return sorted(p for p in found if p not in wanted and p.with_suffix(".py").exists())


if __name__ == "__main__":
    # Run with ``-m``, this file is ``__main__``, a module apart from the ``loyalty_core.till_sql``
    # the till modules import and name their statements in.
    importlib.import_module("loyalty_core.till_sql").main()
