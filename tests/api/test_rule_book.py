"""docs/rules.md is the project's own rule book: every id cited in code, tests, benches and docs is
in it, and every module and test it names exists, so the book and the code cannot drift apart; and
no file cites documents that live outside the repository instead."""

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


# What the rule book replaces: citations of documents that live outside the repository (the public
# API description, the back-office agreement, the reliability figures, the issue tracker). The
# project states its rules in docs/rules.md and cites them by id.
FIGURES = r"(?:L[1-5]|C[1-6]|K[1-3]|R[1-3]|A[1-5]|W[12]|M[1-3]|E[12]|P[1-4])"
OUTSIDE_CITATION = re.compile(
    "|".join(
        [
            r"(?i:\bspec\b)",
            r"(?i:\bcontract,?\s+(?:§\s*)?(?:section|\d))",
            r"(?i:back-office contract)",
            r"(?i:\bthe contract\b|\btest_\w*_(?:spec|contract)(?:_\w*)?\b)",
            r"(?i:further decisions)",
            r"(?i:\bhardening\b)",
            r"RELIABILITY",
            r"(?i:\bissues?\s*#?\d)",
            r"(?i:\bissue\s*['\":])",
            r"(?i:\b(?:public|the) specification\b)",
            rf"(?<![%\w]){FIGURES}\b(?!%)",
            r"(?i:loyalty-api\.md|back-office\.md|\.\./shared)",
            r"(?i:\b(?:validation details|identifiers|marketing consent|authentication|plan limits|versioning"
            r"|merged customers|earning|idempotency|rate limit|send-card|wallet[- ]pass"
            r"|what the service does),?\s+(?:rules?\s+)?\d)",
            r"(?i:\brules?\s+\d)",
        ]
    )
)
# Real non-citations: a package's name, importlib's module specs.
NOT_A_CITATION = re.compile(
    r"openapi[-_]spec[-_]validator|\w*find_spec\b|\bspec(?= = |\.submodule_search_locations| is None)"
)
SWEPT = ("packages", "services", "tests", "bench", "deploy", "docs", ".ci")
# The book itself, the documents generated from docstrings (their sources are swept), and this file,
# which names the patterns.
NOT_SWEPT = {
    BOOK,
    ROOT / "docs" / "openapi-public.json",
    ROOT / "docs" / "openapi-admin.json",
    Path(__file__).resolve(),
}


def swept_files() -> list[Path]:
    found = [ROOT / "README.md", ROOT / "justfile"]
    for top in SWEPT:
        for path in (ROOT / top).rglob("*"):
            inner = path.relative_to(ROOT / top).parts
            built = any(p == "__pycache__" or p.startswith(".") or p.endswith(".egg-info") for p in inner)
            if path.is_file() and not built and path not in NOT_SWEPT:
                found.append(path)
    return found


def outside_citations() -> list[str]:
    found = []
    for path in swept_files():
        relative = path.relative_to(ROOT).as_posix()
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE_CITATION.search(NOT_A_CITATION.sub("", line)):
                found.append(f"{relative}:{number}: {line.strip()}")
    return found


def test_no_file_cites_documents_outside_the_repository() -> None:
    assert outside_citations() == []
