"""The README's walkthrough runs: its fenced ``sh`` blocks, exactly as written, pasted one after
another into one bash shell against a freshly served instance (granian on a free port, a fresh
database, its own LOYALTY_HOME). Each block must finish without a failing command, and the shop
must end as the walkthrough says: the reward redeemed and verified, the card mail written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.database import database_name, fresh_database
from tests.support.ports import free_port
from tests.support.processes import started

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SECTION = "## Walkthrough"
PORTAL = "## The shop's portal"
DONE = "walkthrough-block-done"


def walkthrough_blocks(text: str, heading: str = SECTION) -> list[str]:
    """The ``sh`` blocks between a section's heading (the walkthrough's by default) and the next one's."""
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    section = text[start : end if end != -1 else len(text)]
    return re.findall(r"^```sh\n(.*?)^```$", section, flags=re.MULTILINE | re.DOTALL)


def test_the_walkthrough_has_its_blocks() -> None:
    """The extraction finds the blocks a reader sees, from the helpers to the card mail."""
    blocks = walkthrough_blocks(README.read_text())
    assert len(blocks) == 11
    assert blocks[0].startswith("# the service's address")
    assert "send-card" in blocks[-1]
    # nothing in the walkthrough names an id it did not read from an answer
    assert not re.search(r"/vendors/\d|--vendor-id \d|--plan-id \d|reward_id\": \d", "".join(blocks))


def _get(url: str, token: str) -> tuple[int, Any]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read() or b"{}")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``loyalty serve`` on a free port over a fresh, unmigrated database, with its own home."""
    port = free_port()
    home = tmp_path / "home"
    env = {
        **os.environ,
        "DATABASE_URL": fresh_database(database_name("readme")),
        "LOYALTY_PORT": str(port),
        "LOYALTY_HOME": str(home),
    }
    for name in ("REDIS_URL", "LOYALTY_ADMIN_TOKEN", "LOYALTY_TEST_MODE", "LOYALTY_SMTP_HOST", "LOYALTY_WORKER"):
        env.pop(name, None)
    with started([sys.executable, "-m", "loyalty_api.cli", "serve"], env, tmp_path / "serve.log") as command:
        base = f"http://127.0.0.1:{port}"
        command.wait_answering(f"{base}/health/live")
        yield base, home
        command.stop()


def test_the_readme_walkthrough_runs_block_by_block(served: tuple[str, Path], tmp_path: Path) -> None:
    base, home = served
    text = README.read_text()
    # the portal section carries on from the walkthrough (its shop's first users)
    blocks = walkthrough_blocks(text) + walkthrough_blocks(text, PORTAL)
    # one shell, as a reader pastes into: variables and functions carry from block to block; the
    # first failing command stops it, and the markers say which block it was in
    script = "set -euo pipefail\n" + "".join(f"{block}echo {DONE} {n}\n" for n, block in enumerate(blocks, 1))
    env = {**os.environ, "BASE": base, "LOYALTY_HOME": str(home), "UV_FROZEN": "1"}
    env.pop("LOYALTY_ADMIN_TOKEN", None)
    ran = subprocess.run(
        ["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    finished = re.findall(rf"^{DONE} (\d+)$", ran.stdout, flags=re.MULTILINE)
    assert ran.returncode == 0, f"block {len(finished) + 1} failed:\n{ran.stdout[-3000:]}\n{ran.stderr[-3000:]}"
    assert finished == [str(n) for n in range(1, len(blocks) + 1)]

    # the state the walkthrough ends in, read back through the API
    admin = (home / "admin-token").read_text().strip()
    status, vendors = _get(f"{base}/admin/v1/vendors?q=bakery+jansen", admin)
    assert status == 200
    [vendor] = vendors["data"]["data"]
    status, redemptions = _get(f"{base}/admin/v1/vendors/{vendor['id']}/redemptions", admin)
    [redemption] = redemptions["data"]["data"]
    assert (redemption["status"], redemption["reward"]["name"], redemption["points_deducted"]) == (
        "used",
        "Free coffee",
        20,
    )
    status, customers = _get(f"{base}/admin/v1/vendors/{vendor['id']}/customers?q=anna@example.nl", admin)
    [customer] = customers["data"]["data"]
    # 24 earned, 4 taken back by the return, 20 redeemed, then 50 for referring Bram (REFERRAL-13):
    # due at once, counted before any job writes its entry (PENDING-4)
    assert customer["balance"] == 50
    assert customer["referred_by"] is None
    status, friends = _get(f"{base}/admin/v1/vendors/{vendor['id']}/customers?q=bram@example.nl", admin)
    [friend] = friends["data"]["data"]
    # 12 earned by the first purchase, 25 for being referred (REFERRAL-13)
    assert (friend["referred_by"], friend["balance"]) == (customer["id"], 37)
    # 1250 cents bought, 250 returned: the 1000 left still hold Silver (TIER-6)
    assert (customer["tier"]["key"], customer["tier"]["qualifying_total"]) == ("silver", 1000)
    assert len(list((home / "outbox").glob("*.eml"))) == 1
    status, users = _get(f"{base}/admin/v1/vendors/{vendor['id']}/users", admin)
    assert status == 200
    assert sorted((u["email"], u["role"]) for u in users["data"]["data"]) == [
        ("anna@bakery.example", "staff"),
        ("owner@bakery.example", "owner"),
    ]
