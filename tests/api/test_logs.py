"""One log format for every source of a served instance (the app, granian, SAQ), chosen by
LOYALTY_LOG_FORMAT; SAQ's per-run lines of the scheduled jobs only at debug level."""

from __future__ import annotations

import contextlib
import json
import logging
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from litestar import Litestar
from litestar.testing import AsyncTestClient
from structlog.testing import capture_logs

from loyalty_api.logs import configure_logging, saq_lines
from tests.support.served import Served


def _ask(url: str) -> None:
    with contextlib.suppress(urllib.error.HTTPError):
        urllib.request.urlopen(url, timeout=5).close()


def _log_lines(served: Served) -> list[str]:
    """What the processes logged on stdout: the command's own ``loyalty:`` notices are not log lines."""
    return [line for line in served.log.read_text().splitlines() if line and not line.startswith("loyalty: ")]


def test_json_lines_from_every_source(database_url: str, tmp_path: Path) -> None:
    with Served(database_url, tmp_path) as served:
        _ask(f"{served.url}/favicon.ico")
        _ask(f"{served.url}/api/v1/rewards")
    entries = [json.loads(line) for line in _log_lines(served)]  # every line is one JSON object
    by_logger = {entry["logger"] for entry in entries}
    assert {"granian", "saq", "loyalty.access"} <= by_logger
    assert all({"event", "level", "timestamp"} <= entry.keys() for entry in entries)
    assert any(e["logger"] == "granian" and e["event"].startswith("Listening at: ") for e in entries)
    access = {e["path"]: e["status"] for e in entries if e["logger"] == "loyalty.access"}
    assert access["/favicon.ico"] == 404  # an unmatched path is logged as asked for
    assert access["/api/v1/rewards"] == 401  # a matched one as its route
    # the scheduled jobs are enqueued at start: their lines are debug lines, not shown at INFO
    assert not [e for e in entries if e["logger"] == "saq" and "cron:" in e["event"]]


def test_console_lines_from_every_source(database_url: str, tmp_path: Path) -> None:
    with Served(database_url, tmp_path, {"LOYALTY_LOG_FORMAT": "console"}) as served:
        _ask(f"{served.url}/api/v1/nope")
    lines = _log_lines(served)
    assert not [line for line in lines if line.startswith(("{", "["))]
    assert any("Listening at: " in line and "[granian]" in line and "[info     ]" in line for line in lines)
    assert any("request" in line and "path=/api/v1/nope" in line and "status=404" in line for line in lines)


def _record(message: str, job: str, level: int = logging.INFO) -> logging.LogRecord:
    return logging.LogRecord("saq", level, __file__, 1, message, (job,), None)


@pytest.mark.parametrize("message", ["Enqueuing %s", "Processing %s", "Finished %s"])
def test_a_scheduled_jobs_run_is_a_debug_line(message: str) -> None:
    saq = logging.getLogger("saq")
    before = saq.level
    try:
        saq.setLevel(logging.INFO)
        cron = _record(message, "Job<function: prune_tokens, queue: loyalty, key: cron:prune_tokens>")
        assert saq_lines(cron) is False
        assert cron.levelname == "DEBUG"
        saq.setLevel(logging.DEBUG)
        assert saq_lines(_record(message, "Job<function: prune_tokens, key: cron:prune_tokens>")) is True
        saq.setLevel(logging.INFO)
        queued = _record(message, "Job<function: send_card_mail, queue: loyalty, key: card-mail-7>")
        assert saq_lines(queued) is True
        assert queued.levelname == "INFO"
    finally:
        saq.setLevel(before)


@pytest.fixture
def restored_logging() -> Iterator[None]:
    """configure_logging changes the process's logging: put it back for the tests after this one."""
    config, root, access = structlog.get_config(), logging.getLogger(), logging.getLogger("loyalty.access")
    handlers, level, access_level = root.handlers[:], root.level, access.level
    yield
    structlog.configure(**config)
    root.handlers[:] = handlers
    root.setLevel(level)
    access.setLevel(access_level)


def test_a_line_below_the_level_is_dropped_and_one_logger_can_be_quietened(
    restored_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging("WARNING")
    quiet = structlog.get_logger("loyalty.access")  # a fresh proxy: it takes the wrapper of this configuration
    assert quiet.info("request", path="/a") is None
    quiet.warning("slow", path="/b")
    assert [json.loads(line)["path"] for line in capsys.readouterr().out.splitlines()] == ["/b"]

    configure_logging("INFO")
    access = structlog.get_logger("loyalty.access")
    access.info("request", path="/c", status=200)
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(e["logger"], e["level"], e["event"], e["path"], e["status"]) for e in lines] == [
        ("loyalty.access", "info", "request", "/c", 200)
    ]
    # an operator may silence the access log alone: the standard logger's own level still counts
    logging.getLogger("loyalty.access").setLevel(logging.WARNING)
    access.info("request", path="/d", status=200)
    structlog.get_logger("loyalty.other").info("kept", path="/e")
    assert [json.loads(line)["path"] for line in capsys.readouterr().out.splitlines()] == ["/e"]


async def test_a_portal_page_is_logged_under_its_own_route(client: AsyncTestClient[Litestar]) -> None:
    """OPS-6: the access line names the route's template, the portal's pages too: under ``/portal``
    and as their own route (a customer's id is never in it); a path the portal does not know is
    logged as asked for, without a slash of the mount's."""
    with capture_logs() as lines:
        for path in ("/portal/login", "/portal", "/portal/customers/123456", "/portal/nowhere"):
            await client.get(path, follow_redirects=False)
    logged = [(line["path"], line["status"]) for line in lines if line.get("event") == "request"]
    assert logged == [
        ("/portal/login", 200),
        ("/portal", 303),
        ("/portal/customers/{customer_id}", 303),
        ("/portal/nowhere", 404),
    ]
