"""docs/rules.md is the project's own rule book: every id cited in code, tests, benches and docs is
in it, and every module and test it names exists, so the book and the code cannot drift apart."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "docs" / "rules.md"
SOURCES = [ROOT / "packages", ROOT / "services", ROOT / "tests", ROOT / "bench"]
SOURCE_ROOTS = [*(ROOT / "packages").glob("*/src"), ROOT / "services" / "api" / "src"]

RULE = re.compile(r"^- \*\*([A-Z]+-\d+)\*\*", re.MULTILINE)
REFERENCE = re.compile(r"`([\w/.]+\.py)(?:::(\w+))?`")


@cache
def book() -> str:
    return BOOK.read_text(encoding="utf-8")


@cache
def rule_ids() -> frozenset[str]:
    return frozenset(RULE.findall(book()))


def areas() -> set[str]:
    return {rule.rsplit("-", 1)[0] for rule in rule_ids()}


def entries() -> list[tuple[str, str]]:
    """Each rule with its text, up to the next rule or heading."""
    found = []
    for block in re.split(r"\n(?=- \*\*|#)", book()):
        match = RULE.match(block)
        if match:
            found.append((match.group(1), block))
    return found


def project_files(suffixes: tuple[str, ...]) -> list[Path]:
    return [p for root in SOURCES for p in root.rglob("*") if p.suffix in suffixes and "__pycache__" not in p.parts]


def module_exists(reference: str) -> bool:
    if reference.startswith(("tests/", "bench/")):
        return (ROOT / reference).is_file()
    return any((root / reference).is_file() for root in SOURCE_ROOTS)


def defines(path: Path, name: str) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name for node in ast.walk(tree)
    )


def test_ids_are_unique_and_numbered_within_their_area() -> None:
    ids = RULE.findall(book())
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    for area in areas():
        numbers = sorted(int(i.rsplit("-", 1)[1]) for i in ids if i.rsplit("-", 1)[0] == area)
        assert numbers == list(range(1, len(numbers) + 1)), f"{area} is numbered {numbers}"


def test_every_rule_names_a_module_and_a_test_that_exist() -> None:
    problems = []
    for rule, text in entries():
        references = REFERENCE.findall(text)
        modules = [path for path, name in references if not path.startswith("tests/")]
        tests = [(path, name) for path, name in references if path.startswith("tests/")]
        if not modules:
            problems.append(f"{rule} names no module")
        if not any(name for _, name in tests):
            problems.append(f"{rule} names no test")
        for path in modules:
            if not module_exists(path):
                problems.append(f"{rule}: no module {path}")
        for path, name in tests:
            if not (ROOT / path).is_file():
                problems.append(f"{rule}: no test file {path}")
            elif name and not defines(ROOT / path, name):
                problems.append(f"{rule}: {path} has no {name}")
    assert problems == []


def test_every_cited_id_is_in_the_book() -> None:
    cited = re.compile(r"\b(" + "|".join(sorted(areas())) + r")-(\d+)\b")
    missing = set()
    docs = list((ROOT / "docs").rglob("*.md"))
    for path in [*project_files((".py", ".md", ".lua", ".toml")), *docs, ROOT / "README.md"]:
        if path == BOOK:
            continue
        for area, number in cited.findall(path.read_text(encoding="utf-8")):
            if f"{area}-{number}" not in rule_ids():
                missing.add(f"{path.relative_to(ROOT)}: {area}-{number}")
    assert sorted(missing) == []
