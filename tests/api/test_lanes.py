"""`just test`'s lanes (tests/support/lanes.py): every suite runs in exactly one lane, this suite in
two, the files that start processes of their own (``api_procs`` in the justfile, `just
test-api-procs`) beside the rest (`just test-api-in-process`), every test file in exactly one of
them, and `just test-api` (test-serial's) runs the whole suite in one process. The recipes are read
as just would run them (``--dry-run``), not as written. How many lanes run at once follows the cores
and the PostgreSQL's free connections, or LOYALTY_TEST_LANES; the lanes run through ``just`` each in
a session of its own, their lines prefixed."""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import lanes
from tests.support.database import connect, server_url
from tests.support.lanes import CONNECTIONS, LANES, Lanes, Server, TooFew, needed, plan, read_server

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def just() -> str:
    found = shutil.which("just")
    assert found is not None, "just (rust-just) is a development dependency of the workspace"
    return found


def dry_run(just: str, recipe: str) -> str:
    """What ``just <recipe>`` would run (just prints it on stderr and runs nothing)."""
    done = subprocess.run(
        [just, "--justfile", str(ROOT / "justfile"), "--dry-run", *recipe.split()],
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


def test_just_test_runs_every_suite_in_exactly_one_lane(just: str) -> None:
    (command,) = dry_run(just, "test -x -k envelope").splitlines()
    assert command.split()[:6] == ["uv", "run", "--frozen", "python", "-m", "tests.support.lanes"]
    assert command.endswith("-x -k envelope")
    laned = [recipe for recipes in LANES.values() for recipe in recipes]
    assert len(set(laned)) == len(laned)
    # test-serial's suites, with test-api split in its two halves
    suites = {"test-core", "test-wallet-pass", "test-http", "test-client", "test-portal"}
    assert set(laned) == suites | {"test-api-in-process", "test-api-procs"}
    assert pytest_arguments(just, "test-api") == ["tests/api"]


def server(max_connections: int, in_use: int, reserved: int = 3) -> Server:
    return Server("127.0.0.1:5432", max_connections, in_use, reserved)


def needed_for(free: int) -> int:
    """How many of the hungriest lanes fit in ``free`` connections (at least one here)."""
    return max(n for n in range(1, len(LANES) + 1) if needed(n) <= free)


def test_the_connections_needed_are_those_of_the_hungriest_lanes() -> None:
    assert set(CONNECTIONS) == set(LANES)
    hungriest = sorted(CONNECTIONS.values(), reverse=True)
    assert [needed(n) for n in (1, 2, 4)] == [hungriest[0], hungriest[0] + hungriest[1], sum(hungriest)]


@pytest.mark.parametrize(
    ("cores", "found", "lanes_at_once"),
    [
        (2, server(200, 10), 4),  # room for all: the cores' four
        (2, server(100, 38), needed_for(59)),  # the shared server on a busy day
        (2, server(60, 0), 2),  # the busy-machine run's server
        (1, server(500, 0), 2),  # one core
        (8, server(500, 0), 4),  # never more than there are lanes
        (2, None, 4),  # an embedded server of the run's own
        (4, server(100, 100 - 3 - needed(1)), 1),  # exactly the hungriest lane's
        (4, server(100, 100 - 3 - needed(2)), 2),
    ],
)
def test_the_lanes_at_once_follow_the_cores_and_the_free_connections(
    cores: int, found: Server | None, lanes_at_once: int
) -> None:
    at_once, why = plan(cores, found, None)
    assert at_once == lanes_at_once
    assert why.startswith(f"lanes: {lanes_at_once} at once ({cores} cores;")
    if found is not None:
        assert needed(at_once) <= found.free
        assert why.endswith(f"connections free at 127.0.0.1:5432, {needed(at_once)} needed)")


def test_too_few_free_connections_for_one_lane_is_one_line() -> None:
    in_use = 100 - 3 - needed(1) + 1
    with pytest.raises(TooFew) as refused:
        plan(2, server(100, in_use), None)
    assert str(refused.value) == (
        f"too few free PostgreSQL connections for one test lane: {needed(1) - 1} free at 127.0.0.1:5432 "
        f"(max_connections 100, {in_use} in use, 3 reserved), {needed(1)} needed; free some or set "
        "LOYALTY_TEST_LANES=1 to try anyway"
    )
    assert "\n" not in str(refused.value)


def test_loyalty_test_lanes_overrides_the_plan() -> None:
    assert plan(2, server(10, 9), "1") == (1, "lanes: 1 at once (LOYALTY_TEST_LANES=1)")
    assert plan(1, server(100, 0), "3")[0] == 3
    assert plan(1, None, "9")[0] == len(LANES)
    for wrong in ("0", "two", "", "-1"):
        with pytest.raises(TooFew, match="LOYALTY_TEST_LANES="):
            plan(2, None, wrong)


def test_the_server_is_read_as_it_is() -> None:
    """The planner's figures are the server's own: its max_connections and the client connections
    open now (one more is seen while another is held)."""
    url = server_url()
    before = read_server(url)
    with connect(url) as conn:
        limit = conn.execute("SELECT current_setting('max_connections')::int").fetchone()
        held = read_server(url)
    assert limit is not None
    assert before.max_connections == held.max_connections == limit[0]
    assert before.reserved >= 0
    # other runs share the server, so the count moves; the held connection is among those seen
    assert held.in_use >= 1


def test_main_refuses_in_one_line_when_the_server_is_full(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.delenv("LOYALTY_TEST_LANES", raising=False)
    monkeypatch.setattr(lanes, "_server", lambda: server(30, 20))
    assert lanes.main(["--just", "just", "--justfile", str(tmp_path / "justfile")]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("just test: too few free PostgreSQL connections for one test lane: 7 free")
    assert err.count("\n") == 1


JUSTFILE = """
slow-a *ARGS:
    @sleep 1; echo a {{ARGS}}
slow-b *ARGS:
    @sleep 1; echo b
fails *ARGS:
    @echo failing; exit 1
none *ARGS:
    @exit 5
"""


def lanes_of(tmp_path: Path) -> tuple[Lanes, io.StringIO]:
    justfile = tmp_path / "justfile"
    justfile.write_text(JUSTFILE)
    just = shutil.which("just")
    assert just is not None
    out = io.StringIO()
    return Lanes(lambda recipe: [just, "--justfile", str(justfile), recipe, "-x"], out), out


def test_lanes_run_their_recipes_with_prefixed_lines_and_fail_when_one_fails(tmp_path: Path) -> None:
    runner, out = lanes_of(tmp_path)
    assert runner.run({"one": ("slow-a", "none"), "two": ("fails", "slow-b")}, 2) is False
    lines = out.getvalue().splitlines()
    assert "[one] a -x" in lines
    assert lines.index("[two] failing") < lines.index("[two] b")  # a lane goes on after a failure
    finished = sorted(line.split(" in ")[0] for line in lines if "lane finished" in line)
    assert finished == ["[one] lane finished: passed", "[two] lane finished: FAILED"]


def test_no_more_lanes_than_planned_run_at_once(tmp_path: Path) -> None:
    runner, _ = lanes_of(tmp_path)
    started = time.monotonic()
    assert runner.run({"one": ("slow-a",), "two": ("slow-b",), "three": ("slow-a",)}, 3) is True
    together = time.monotonic() - started
    runner, _ = lanes_of(tmp_path)
    started = time.monotonic()
    assert runner.run({"one": ("slow-a",), "two": ("slow-b",), "three": ("slow-a",)}, 1) is True
    assert time.monotonic() - started >= 3.0 > together


def test_an_interrupted_run_kills_every_lanes_session(tmp_path: Path) -> None:
    """SIGTERM to the runner ends each lane's whole session (its pytest and what that started)."""
    justfile = tmp_path / "justfile"
    justfile.write_text(f"long *ARGS:\n    @sleep {MARK} & sleep {MARK} & echo started; wait\n")
    env = {"LOYALTY_TEST_LANES": "2", "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"}
    just = shutil.which("just")
    assert just is not None
    runner = subprocess.Popen(
        [sys.executable, "-c", LONG_LANES, just, str(justfile)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert runner.stdout is not None
        assert runner.stdout.readline() == "lanes: 2 at once (LOYALTY_TEST_LANES=2)\n"
        assert sorted(runner.stdout.readline() for _ in range(2)) == ["[a] started\n", "[b] started\n"]
        sleepers = sleeping()
        assert len(sleepers) == 4
        runner.terminate()
        assert runner.wait(10) == 128 + 15
        deadline = time.monotonic() + 5
        while sleeping() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sleeping() == []
    finally:
        for pid in [runner.pid, *sleeping()]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        runner.wait()
        if runner.stdout is not None:
            runner.stdout.close()


LONG_LANES = """
import sys
from tests.support import lanes
lanes.LANES = {"a": ("long",), "b": ("long",)}
sys.exit(lanes.main(["--just", sys.argv[1], "--justfile", sys.argv[2]]))
"""


MARK = f"{300 + os.getpid() % 1000 / 1000:.3f}"
"""The lanes' ``sleep`` duration in the interrupt test: no other process sleeps exactly that long."""


def sleeping() -> list[int]:
    """The lanes' ``sleep MARK`` processes still running."""
    import psutil

    return [
        process.pid
        for process in psutil.process_iter(["cmdline", "status"])
        if process.info["cmdline"] == ["sleep", MARK] and process.info["status"] != psutil.STATUS_ZOMBIE
    ]
