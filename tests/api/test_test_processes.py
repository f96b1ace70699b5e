"""The processes the tests start (tests/support/processes.py): each in a session of its own that is
killed whole at the end, failure or not, and a server that does not start says why."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.support.database import server_url, to_sqlalchemy, with_database
from tests.support.live import served
from tests.support.processes import living, started

SLEEPERS = (
    "import subprocess, time; [subprocess.Popen(['sleep', '120']) for _ in range(2)];"
    " print('up', flush=True); time.sleep(120)"
)


def test_a_failed_test_still_kills_the_whole_group(tmp_path: Path) -> None:
    """The command's own children (as granian's workers are) end with it, though the test failed."""
    children: list[psutil.Process] = []
    log = tmp_path / "out.log"
    # the failure is raised inside the block, as a failing test's would be
    with (  # noqa: PT012
        pytest.raises(AssertionError, match="the test failed"),
        started([sys.executable, "-c", SLEEPERS], {"PATH": "/usr/bin:/bin"}, log) as command,
    ):
        command.wait_for("up", 60)
        children += psutil.Process(command.process.pid).children()
        assert len(children) == 2
        raise AssertionError("the test failed")
    deadline = time.monotonic() + 5
    while living(children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert living(children) == []


def test_a_server_that_does_not_start_shows_its_output(tmp_path: Path) -> None:
    """Before, the portal's live server sent its output nowhere and said only "the service did not
    start"; now the error carries the end of what it printed (here the preflight's sentence)."""
    missing = to_sqlalchemy(with_database(server_url(), "loyalty_test_no_such_database"))
    with pytest.raises(RuntimeError) as failed, served(missing, tmp_path / "home"):
        pass
    message = str(failed.value)
    assert message.startswith("the service did not start (exit status ")
    assert "loyalty_test_no_such_database" in message
    assert (tmp_path / "home" / "serve.log").read_text().strip() in message
