"""One writer of ledger entries: the SQL that writes an entry, its lots or a wallet's balance lives in
``loyalty_core/wallet/ledger_writes.py`` only, and no module builds ``LedgerEntry`` or ``PointLot``
rows through the ORM. A second writer would be a second copy of the ledger's invariant."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WRITER = ROOT / "packages/loyalty_core/src/loyalty_core/wallet/ledger_writes.py"
MODELS = "loyalty_core.wallet.models"
ROWS = frozenset({"LedgerEntry", "PointLot"})

WRITES = [
    re.compile(r"insert\s+into\s+ledger_entries\b", re.IGNORECASE),
    re.compile(r"insert\s+into\s+point_lots\b", re.IGNORECASE),
    re.compile(r"update\s+wallets\b(\s+(as\s+)?\w+)?\s+set\s+(\w+\.)?balance\b", re.IGNORECASE),
]


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
    assert len(sql_writes(WRITER.read_text())) == 4  # a debit's entry and the expiry written before it


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
