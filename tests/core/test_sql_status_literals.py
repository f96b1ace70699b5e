"""Status and type values in SQL come from their StrEnums: bound as parameters, or rendered into
the text from the enum at import (where a partial index's predicate needs the literal), never typed
by hand as a quoted literal. A renamed or added value then cannot leave a statement matching
nothing."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from enum import StrEnum
from pathlib import Path

import loyalty_core

ROOT = Path(__file__).resolve().parents[2]
SQL = re.compile(r"\b(select\b.*\bfrom|insert\s+into|update\s+\w+(\s+\w+)?\s+set|delete\s+from|where)\b", re.I | re.S)


def enum_values() -> frozenset[str]:
    """Every value of every StrEnum the domain defines."""
    for module in pkgutil.walk_packages(loyalty_core.__path__, "loyalty_core."):
        importlib.import_module(module.name)
    values: set[str] = set()
    pending: list[type[StrEnum]] = [StrEnum]
    while pending:
        for sub in pending.pop().__subclasses__():
            pending.append(sub)
            if sub.__module__.startswith("loyalty_core."):
                values |= {str(member) for member in sub}
    return frozenset(values)


def sql_texts(tree: ast.AST) -> list[tuple[int, str]]:
    """String constants (and the literal parts of f-strings) that read as SQL; docstrings are prose."""
    prose_or_parts = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    } | {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose_or_parts:
            text = node.value
        elif isinstance(node, ast.JoinedStr):
            # an f-string's literal parts are str constants
            text = "".join(str(v.value) if isinstance(v, ast.Constant) else "{}" for v in node.values)
        else:
            continue
        if SQL.search(text):
            found.append((node.lineno, text))
    return found


def quoted_literals(text: str, values: frozenset[str]) -> list[str]:
    return [f"'{m}'" for m in re.findall(r"'([a-z_]+)'", text) if m in values]


def test_no_status_literal_is_typed_into_sql() -> None:
    values = enum_values()
    offenders = {}
    for path in sorted((ROOT / "packages").rglob("*.py")):
        for line, text in sql_texts(ast.parse(path.read_text())):
            if hits := quoted_literals(text, values):
                offenders[f"{path.relative_to(ROOT)}:{line}"] = hits
    assert offenders == {}


def test_the_scan_finds_a_typed_literal() -> None:
    values = enum_values()
    assert {"anonymized", "cancelled", "adjust", "valid"} <= values
    code = (
        "X = \"SELECT 1 FROM customers WHERE status <> 'anonymized'\"\n"
        "Y = f\"WHERE type = '{T}'\"\n"
        "Z = f\"UPDATE redemptions SET status = 'cancelled' WHERE id = {n}\"\n"
        '"""A docstring may say \'valid\' WHERE it likes."""\n'
    )
    texts = sql_texts(ast.parse(code))
    assert sorted(hit for _, text in texts for hit in quoted_literals(text, values)) == ["'anonymized'", "'cancelled'"]
