"""The `loyalty` console script: --help on every verb, a clear error on a bad setting."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loyalty_api.cli import main
from loyalty_api.settings import Settings


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["serve", "--help"],
        ["worker", "--help"],
        ["db", "--help"],
        ["db", "upgrade", "--help"],
    ],
)
def test_every_verb_has_help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 0
    assert "usage: loyalty" in capsys.readouterr().out


HEAVY = ("litestar", "sqlalchemy", "alembic", "advanced_alchemy", "psycopg", "redis", "saq", "granian", "pgserver")
"""What a verb imports only when it runs: the web framework, the database toolkit and its migrations,
the database and queue clients, the server. With them, ``--help`` took seconds on a busy machine."""
EVERY_HELP_THEN_THE_TOKEN = """
import argparse, json, sys
from loyalty_api import cli

def paths(parser, path=()):
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, verb in action.choices.items():
                yield from paths(verb, (*path, name))

helped, every = 0, list(paths(cli.parser()))
for path in every:
    try:
        cli.main([*path, "--help"])
    except SystemExit as done:
        helped += done.code == 0
cli.main(["admin", "token"])
print(json.dumps({"verbs": len(every), "helped": helped, "modules": sorted(sys.modules)}))
"""


def test_help_and_the_admin_token_import_nothing_heavy(tmp_path: Path) -> None:
    """OPS-11: ``loyalty --help``, every verb's ``--help`` and ``loyalty admin token`` (one file read)
    answer at once: the process that ran them all has imported none of the heavy libraries."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOYALTY_")}
    env["LOYALTY_HOME"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", EVERY_HELP_THEN_THE_TOKEN], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    *printed, last = done.stdout.strip().splitlines()
    outcome = json.loads(last)
    assert printed[-1] == (tmp_path / "admin-token").read_text().strip()
    assert outcome["verbs"] > 20  # every verb and action, ``loyalty`` itself among them
    assert outcome["helped"] == outcome["verbs"]
    assert sorted({m.split(".")[0] for m in outcome["modules"]} & set(HEAVY)) == []


def test_a_bad_setting_exits_2_naming_it(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("LOYALTY_PORT", "not-a-port")
    assert main(["db", "upgrade"]) == 2
    assert "LOYALTY_PORT" in capsys.readouterr().err


# --- the back office's first steps (loyalty admin token, plans/vendors/clients create) ---------------


@pytest.fixture
def through_the_app(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The create verbs call the admin API; here they reach the composed app in process."""
    from litestar.testing import TestClient

    from loyalty_api import backoffice
    from loyalty_api.app import create_app

    with TestClient(app=create_app(settings)) as client:

        def sender(base_url: str) -> backoffice.Send:
            def send(method: str, path: str, body: dict[str, Any] | None, token: str) -> tuple[int, dict[str, Any]]:
                response = client.request(method, path, json=body, headers={"Authorization": f"Bearer {token}"})
                return response.status_code, response.json()

            return send

        monkeypatch.setattr(backoffice, "http_sender", sender)
        monkeypatch.setattr("loyalty_api.cli.Settings.from_env", lambda: settings)
        yield


def _lines(out: str) -> dict[str, str]:
    """The ``name=value`` lines the verb printed (the in-process app's request logs share stdout)."""
    return dict(line.split("=", 1) for line in out.splitlines() if re.fullmatch(r"[a-z_]+=\S*", line))


@pytest.mark.parametrize(
    "argv",
    [
        ["admin", "--help"],
        ["admin", "token", "--help"],
        ["plans", "create", "--help"],
        ["vendors", "create", "--help"],
        ["clients", "create", "--help"],
        *(
            [area, verb, "--help"]
            for area in ("plans", "vendors", "clients", "branches", "rewards")
            for verb in ("list", "show")
        ),
        ["vendors", "usage", "--help"],
        ["vendors", "reconcile", "--help"],
        ["users", "create", "--help"],
    ],
)
def test_back_office_verbs_have_help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 0
    assert "usage: loyalty" in capsys.readouterr().out


def test_admin_token_prints_the_stored_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("LOYALTY_ADMIN_TOKEN", raising=False)
    monkeypatch.setenv("LOYALTY_HOME", str(tmp_path))
    assert main(["admin", "token"]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed == (tmp_path / "admin-token").read_text().strip()
    assert main(["admin", "token"]) == 0
    assert capsys.readouterr().out.strip() == printed


def test_plan_vendor_and_client_from_the_shell_give_a_working_till(
    through_the_app: None, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plans", "create", "--name", "Starter", "--max-customers", "500", "--feature", "point_expiry"]) == 0
    plan_id = _lines(capsys.readouterr().out)["plan_id"]
    assert main(["vendors", "create", "--name", "Bakery", "--plan-id", plan_id]) == 0
    vendor_id = _lines(capsys.readouterr().out)["vendor_id"]
    assert main(["clients", "create", "--vendor-id", vendor_id, "--name", "till 1", "--scope", "read"]) == 0
    captured = capsys.readouterr()
    made = _lines(captured.out)
    assert set(made) == {"client_id", "client_secret"}
    assert made["client_id"].startswith("cl_")
    assert "shown this once" in captured.err

    from litestar.testing import TestClient

    from loyalty_api.app import create_app

    with TestClient(app=create_app(settings)) as client:
        token = client.post(
            "/oauth/token",
            data={
                "grant_type": "client_credentials",
                "client_id": made["client_id"],
                "client_secret": made["client_secret"],
            },
        )
        assert token.status_code == 200
        headers = {"Authorization": f"Bearer {token.json()['access_token']}"}
        assert client.get("/api/v1/products", headers=headers).status_code == 200
        assert (
            client.post("/api/v1/products", json={"external_id": "x", "name": "x"}, headers=headers).status_code == 403
        )


def test_a_refused_create_exits_1_with_the_api_error(through_the_app: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vendors", "create", "--name", "Nowhere", "--plan-id", "999999999"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("loyalty: 422 VALIDATION_ERROR")
    assert "plan_id" in err


def test_an_unreachable_service_exits_2_saying_so(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("loyalty_api.cli.Settings.from_env", lambda: settings)
    assert main(["plans", "create", "--name", "x", "--url", "http://127.0.0.1:9"]) == 2
    assert "is `loyalty serve` running?" in capsys.readouterr().err


def test_db_revision_is_not_an_operator_verb(capsys: pytest.CaptureFixture[str]) -> None:
    """Autogenerating migrations is a developer's tool (``just db-revision``), not the operator's."""
    with pytest.raises(SystemExit) as exited:
        main(["db", "revision", "-m", "x"])
    assert exited.value.code == 2
    assert "invalid choice: 'revision'" in capsys.readouterr().err


def test_the_revision_entry_point_has_help_and_needs_a_scratch_database(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from loyalty_api import revision

    with pytest.raises(SystemExit) as exited:
        revision.main(["--help"])
    assert exited.value.code == 0
    assert "usage: just db-revision" in capsys.readouterr().out
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert revision.main(["-m", "x"]) == 2
    assert "DATABASE_URL" in capsys.readouterr().err


def _json_out(capsys: pytest.CaptureFixture[str]) -> Any:
    """The JSON the verb printed: from its first line that opens an object (request logs share stdout)."""
    out = capsys.readouterr().out
    start = next(i for i, line in enumerate(out.splitlines(keepends=True)) if line.startswith("{"))
    return json.loads("".join(out.splitlines(keepends=True)[start:]))


def _verb_lines(out: str) -> list[str]:
    """The verb's own lines (the in-process app's request logs share stdout)."""
    return [line for line in out.splitlines() if not re.match(r"\d{4}-\d{2}-\d{2} |\{\"", line)]


def test_reads_from_the_shell_print_aligned_text_or_json(
    through_the_app: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plans", "create", "--name", "Shelf", "--max-rewards", "3", "--feature", "campaigns"]) == 0
    plan_id = _lines(capsys.readouterr().out)["plan_id"]
    tag = f"Zoë {plan_id}"
    assert main(["vendors", "create", "--name", f"Café {tag}", "--plan-id", plan_id]) == 0
    vendor_id = _lines(capsys.readouterr().out)["vendor_id"]
    assert main(["clients", "create", "--vendor-id", vendor_id, "--name", "hooks", "--scope", "webhooks"]) == 0
    client_id = _lines(capsys.readouterr().out)["client_id"]

    assert main(["plans", "show", plan_id]) == 0
    shown = _verb_lines(capsys.readouterr().out)
    column = len("rate_limit_per_minute  ")  # the widest field name and two spaces
    assert {line[:column].rstrip(): line[column:] for line in shown} == {
        "id": plan_id,
        "name": "Shelf",
        "max_transactions": "0",
        "max_customers": "0",
        "max_rewards": "3",
        "max_campaigns": "0",
        "max_locations": "0",
        "max_campaign_mails": "0",
        "rate_limit_per_minute": "0",
        "overage_percent": "0",
        "features": (
            '{"campaigns":true,"customer_moments":false,"point_expiry":false,"tiers":false,"referrals":false,"campaign_mail":false}'
        ),
        "selectable": "no",
        "created_at": shown[-1][column:],
    }

    assert main(["vendors", "list", "--q", f"cafe zoe {plan_id}"]) == 0
    listed = _verb_lines(capsys.readouterr().out)
    assert listed[0].split() == ["id", "name", "status", "plan_id", "code_prefix"]
    # aligned: each value starts where its column's header does
    assert listed[1].index(f"Café {tag}") == listed[0].index("name")
    assert listed[1].index("active") == listed[0].index("status")
    assert listed[1].split()[0] == vendor_id
    assert listed[-1] == "page 1 of 1, 1 in all"

    assert main(["vendors", "list", "--q", f"cafe zoe {plan_id}", "--json"]) == 0
    page = _json_out(capsys)
    assert [v["id"] for v in page["data"]] == [int(vendor_id)]
    assert page["meta"]["total"] == 1

    assert main(["vendors", "usage", vendor_id, "--json"]) == 0
    usage = _json_out(capsys)
    assert (usage["max_rewards"], usage["rewards"], usage["locations"]) == (3, 0, 0)

    assert main(["clients", "show", client_id, "--json"]) == 0
    client = _json_out(capsys)
    assert (client["client_id"], client["scopes"]) == (client_id, ["webhooks"])
    assert "client_secret" not in client

    assert main(["clients", "list", "--vendor-id", vendor_id]) == 0
    rows = _verb_lines(capsys.readouterr().out)
    assert rows[0].split() == ["client_id", "name", "scopes", "default_branch", "revoked"]
    assert rows[1].split() == [client_id, "hooks", "webhooks", "-", "no"]

    assert main(["branches", "list", "--vendor-id", vendor_id]) == 0
    assert _verb_lines(capsys.readouterr().out)[-1] == "page 1 of 1, 0 in all"
    assert main(["rewards", "list", "--vendor-id", vendor_id, "--status", "inactive"]) == 0
    assert _verb_lines(capsys.readouterr().out)[-1] == "page 1 of 1, 0 in all"


def test_a_read_of_something_unknown_exits_1_with_the_api_error(
    through_the_app: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rewards", "show", "--vendor-id", "999999999", "1"]) == 1
    assert capsys.readouterr().err.startswith("loyalty: 404 VENDOR_NOT_FOUND")
    assert main(["branches", "show", "--vendor-id", "999999999", "HQ"]) == 1
    assert capsys.readouterr().err.startswith("loyalty: 404 VENDOR_NOT_FOUND")
    assert main(["plans", "show", "nope"]) == 1
    assert capsys.readouterr().err.startswith("loyalty: 404 PLAN_NOT_FOUND")


def test_a_portal_user_is_created_with_the_password_from_standard_input(
    through_the_app: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    assert main(["plans", "create", "--name", "Portal"]) == 0
    plan_id = _lines(capsys.readouterr().out)["plan_id"]
    assert main(["vendors", "create", "--name", "Florist", "--plan-id", plan_id]) == 0
    vendor_id = _lines(capsys.readouterr().out)["vendor_id"]
    monkeypatch.setattr("sys.stdin", io.StringIO("a password read from stdin\n"))
    assert main(["users", "create", "--vendor-id", vendor_id, "--email", "Owner@Florist.example"]) == 0
    made = _lines(capsys.readouterr().out)
    assert made["user_id"].isdigit()
    monkeypatch.setattr("sys.stdin", io.StringIO("too short\n"))
    assert main(["users", "create", "--vendor-id", vendor_id, "--email", "staff@florist.example"]) == 1
    assert "password" in capsys.readouterr().err


def test_the_password_is_never_an_argument(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["users", "create", "--vendor-id", "1", "--email", "a@b.example", "--password", "secret secret"])
    assert exited.value.code == 2
    assert "unrecognized arguments: --password" in capsys.readouterr().err
