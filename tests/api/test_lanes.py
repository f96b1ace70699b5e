"""`just test` runs this suite in two lanes at once, the files that start processes of their own
(``api_procs`` in the justfile, `just test-api-procs`) beside the rest (`just test-api-in-process`):
every test file runs in exactly one of them, and `just test-api` (test-serial's) runs the whole suite
in one process. The recipes are read as just would run them (``--dry-run``), not as written."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def just() -> str:
    found = shutil.which("just")
    assert found is not None, "just (rust-just) is a development dependency of the workspace"
    return found


def dry_run(just: str, recipe: str) -> str:
    """What ``just <recipe>`` would run (just prints it on stderr and runs nothing)."""
    done = subprocess.run(
        [just, "--justfile", str(ROOT / "justfile"), "--dry-run", recipe],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stderr


def pytest_arguments(just: str, recipe: str) -> list[str]:
    """The arguments the recipe's one pytest command gets."""
    (command,) = [line for line in dry_run(just, recipe).splitlines() if " pytest " in line]
    return shlex.split(command.split(" pytest ", 1)[1])


def suite_files() -> list[str]:
    return sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "tests" / "api").rglob("test_*.py"))


def test_each_file_of_the_suite_runs_in_exactly_one_half(just: str) -> None:
    procs = pytest_arguments(just, "test-api-procs")
    first, *ignores = pytest_arguments(just, "test-api-in-process")
    assert first == "tests/api"
    assert all(option.startswith("--ignore=") for option in ignores)
    ignored = [option.removeprefix("--ignore=") for option in ignores]
    # a listed file that is renamed or gone would be ignored quietly and its successor run twice
    assert len(set(procs)) == len(procs)
    assert set(procs) <= set(suite_files())
    assert sorted(ignored) == sorted(procs)
    assert "tests/api/test_fuzz.py" in procs  # the suite's longest file is the point of the split


def test_just_test_runs_both_halves_and_test_api_the_whole_suite(just: str) -> None:
    lanes = {}
    for line in dry_run(just, "test").splitlines():
        if line.startswith("lane "):
            name, *recipes = line.split("&", 1)[0].split()[1:]
            lanes[name] = recipes
    assert lanes == {
        "packages": ["test-core", "test-wallet-pass", "test-client", "test-http"],
        "service": ["test-api-in-process"],
        "processes": ["test-api-procs"],
        "portal": ["test-portal"],
    }
    assert pytest_arguments(just, "test-api") == ["tests/api"]
