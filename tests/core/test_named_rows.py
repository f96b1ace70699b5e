"""A database row is read by name or unpacked, never by position (``row[24]``, ``row[27:33]``): a
column added or moved in a statement then fails loudly instead of shifting every read after it."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("packages/loyalty_core/src", "packages/loyalty_http/src", "packages/loyalty_portal/src", "services/api/src")
ROW_NAMES = frozenset({"row", "r", "mark", "found", "written", "record"})


def positional_reads(tree: ast.AST) -> list[str]:
    """Subscripts of a row-named variable by an integer or a slice of integers."""
    hits = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in ROW_NAMES):
            continue
        index = node.slice
        bounds = (index.lower, index.upper) if isinstance(index, ast.Slice) else (index,)
        if any(isinstance(b, ast.Constant) and isinstance(b.value, int) for b in bounds):
            hits.append(f"{ast.unparse(node)} at line {node.lineno}")
    return hits


def test_no_row_is_read_by_position() -> None:
    offenders = {
        str(path.relative_to(ROOT)): hits
        for source in SOURCES
        for path in sorted((ROOT / source).rglob("*.py"))
        if (hits := positional_reads(ast.parse(path.read_text())))
    }
    assert offenders == {}


def test_the_scan_sees_indexes_and_slices() -> None:
    code = "a = row[24]\nb = row[27:33]\nc = r[0].id\nd = row['id']\ne = parts[0]\nf = row[n]\n"
    assert positional_reads(ast.parse(code)) == ["row[24] at line 1", "row[27:33] at line 2", "r[0] at line 3"]
