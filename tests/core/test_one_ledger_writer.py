"""One writer of ledger entries: the SQL that writes an entry, its lots or a wallet's balance lives in
``loyalty_core/wallet/till_posting.py`` only, and no module builds ``LedgerEntry`` or ``PointLot``
rows through the ORM. A second writer would be a second copy of the ledger's invariant. Nor does any
other module compose the posting's CTEs into a statement of its own: ``posting_statement`` does, with
the caller's CTEs before and after them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from loyalty_core.wallet.till_posting import posting_statement

ROOT = Path(__file__).resolve().parents[2]
WRITER = ROOT / "packages/loyalty_core/src/loyalty_core/wallet/till_posting.py"
MODELS = "loyalty_core.wallet.models"
ROWS = frozenset({"LedgerEntry", "PointLot"})

WRITES = [
    re.compile(r"insert\s+into\s+ledger_entries\b", re.IGNORECASE),
    re.compile(r"insert\s+into\s+point_lots\b", re.IGNORECASE),
    re.compile(r"update\s+wallets\b(\s+(as\s+)?\w+)?\s+set\s+(\w+\.)?balance\b", re.IGNORECASE),
]


POSTING_NAMES = frozenset({"posting_ctes", "_posting_ctes"})
POSTING_CTES = re.compile(r"\bledger_(balance|expired|entry|lots_opened|lots_taken)\s+AS\s*\(", re.IGNORECASE)


def sql_writes(text: str) -> list[str]:
    return [m.group(0) for pattern in WRITES for m in pattern.finditer(text)]


def orm_constructions(tree: ast.AST) -> list[str]:
    """Calls of ``LedgerEntry``/``PointLot`` as imported from the wallet's models (under any alias),
    or through the models module itself."""
    names: set[str] = set()
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == MODELS:
            names |= {a.asname or a.name for a in node.names if a.name in ROWS}
        elif isinstance(node, ast.ImportFrom) and node.module == "loyalty_core.wallet":
            modules |= {a.asname or a.name for a in node.names if a.name == "models"}
        elif isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name == MODELS}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in names:
            found.append(f"{func.id}( at line {node.lineno}")
        elif isinstance(func, ast.Attribute) and func.attr in ROWS and ast.unparse(func.value) in modules:
            found.append(f"{ast.unparse(func)}( at line {node.lineno}")
    return found


def posting_builds(tree: ast.AST) -> list[str]:
    """Every mention of the posting's CTE builder (a name, an attribute, an import, a string naming
    it, as ``getattr`` would take) and every definition of one of the posting's CTEs in SQL text,
    in line order."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Name) and node.id in POSTING_NAMES:
            found.append((line, node.id))
        elif isinstance(node, ast.Attribute) and node.attr in POSTING_NAMES:
            found.append((line, ast.unparse(node)))
        elif isinstance(node, ast.ImportFrom):
            found += [(line, f"import {a.name}") for a in node.names if a.name in POSTING_NAMES]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [(line, repr(name)) for name in sorted(POSTING_NAMES) if name in node.value.split()]
            found += [(line, repr(m.group(0))) for m in POSTING_CTES.finditer(node.value)]
    return [f"{what} at line {line}" for line, what in sorted(found)]


def sources() -> list[Path]:
    return sorted([*(ROOT / "packages").rglob("*.py"), *(ROOT / "services").rglob("*.py")])


def test_only_the_writer_writes_entries_lots_and_balances() -> None:
    offenders = {
        str(path.relative_to(ROOT)): hits
        for path in sources()
        if path != WRITER and (hits := sql_writes(path.read_text()))
    }
    assert offenders == {}


def test_no_module_builds_ledger_rows_through_the_orm() -> None:
    offenders = {
        str(path.relative_to(ROOT)): hits
        for path in sources()
        if (hits := orm_constructions(ast.parse(path.read_text())))
    }
    assert offenders == {}


def test_the_writer_holds_every_write() -> None:
    # a debit's entry and the expiry written before it, and the expiry job's batch (its entries and balances)
    assert len(sql_writes(WRITER.read_text())) == 6


def test_the_scan_sees_every_spelling() -> None:
    """The patterns see through case, line breaks and aliases; the ORM scan through aliases."""
    assert len(sql_writes("insert  INTO\n ledger_entries (id)")) == 1
    assert len(sql_writes("Insert into point_lots(id)")) == 1
    assert len(sql_writes("UPDATE wallets w\n   SET w.balance = 1")) == 1
    assert len(sql_writes("update wallets set updated_at = now()")) == 0
    code = (
        "from loyalty_core.wallet.models import PointLot as Lot\n"
        "from loyalty_core.wallet import models\n"
        "Lot(points=1)\nmodels.LedgerEntry(amount=1)\nclass LedgerEntry(Struct): ...\nLedgerEntry(amount=1)\n"
    )
    assert orm_constructions(ast.parse(code)) == ["Lot( at line 3", "models.LedgerEntry( at line 4"]


def test_only_the_writer_composes_the_posting() -> None:
    offenders = {
        str(path.relative_to(ROOT)): hits
        for path in sources()
        if path != WRITER and (hits := posting_builds(ast.parse(path.read_text())))
    }
    assert offenders == {}


def test_the_writer_holds_the_posting() -> None:
    """The scan finds the posting where it is: its builder and its five CTEs, in the writer only."""
    hits = posting_builds(ast.parse(WRITER.read_text()))
    assert [h.split(" at ")[0] for h in hits if h.startswith("_posting_ctes")] == ["_posting_ctes"]
    assert len([h for h in hits if h.startswith("'ledger_")]) == 5


def test_the_posting_scan_sees_every_spelling() -> None:
    code = (
        "from loyalty_core.wallet.till_posting import _posting_ctes as p\n"
        "from loyalty_core.wallet import till_posting\n"
        "till_posting._posting_ctes(gate='true')\n"
        "getattr(till_posting, '_posting_ctes')\n"
        "posting_ctes()\n"
        "SQL = 'WITH ledger_entry  as\\n(INSERT ...)'\n"
        "OTHER = 'SELECT id FROM ledger_entry'\n"
    )
    assert posting_builds(ast.parse(code)) == [
        "import _posting_ctes at line 1",
        "till_posting._posting_ctes at line 3",
        "'_posting_ctes' at line 4",
        "posting_ctes at line 5",
        "'ledger_entry  as\\n(' at line 6",
    ]


def test_the_builder_puts_the_callers_ctes_around_the_posting_in_order() -> None:
    """``before`` in order, then the posting gated on the caller's condition, then ``after`` in
    order, then the caller's select: one statement."""
    posting = (
        posting_statement(gate="EXISTS (SELECT 1 FROM b)", select="1").removeprefix("WITH ").removesuffix("\nSELECT 1")
    )
    built = posting_statement(
        before=("a AS (SELECT 1)", "b AS (SELECT 2 FROM a)"),
        gate="EXISTS (SELECT 1 FROM b)",
        after=("y AS (SELECT id FROM ledger_entry)", "z AS (SELECT 3)"),
        select="y.id FROM y",
    )
    assert built == (
        f"WITH a AS (SELECT 1), b AS (SELECT 2 FROM a), {posting}, "
        "y AS (SELECT id FROM ledger_entry), z AS (SELECT 3)\nSELECT y.id FROM y"
    )
    assert posting.startswith("ledger_balance AS (\n")
    assert "AND (EXISTS (SELECT 1 FROM b))\n" in posting
    assert re.findall(r"(\w+) AS \(", built)[:7] == [
        "a",
        "b",
        "ledger_balance",
        "ledger_expired",
        "ledger_entry",
        "ledger_lots_opened",
        "ledger_lots_taken",
    ]
    assert re.findall(r"(\w+) AS \(", built)[-2:] == ["y", "z"]


def test_the_builder_without_a_gate_always_posts() -> None:
    bare = posting_statement(select="id FROM ledger_entry")
    assert bare.startswith("WITH ledger_balance AS (\n")
    assert bare.endswith("\nSELECT id FROM ledger_entry")
    assert "AND (true)\n" in bare
