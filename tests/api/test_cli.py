"""The `loyalty` console script: --help on every verb, a clear error on a bad setting."""

from __future__ import annotations

import re
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
        ["db", "revision", "--help"],
    ],
)
def test_every_verb_has_help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 0
    assert "usage: loyalty" in capsys.readouterr().out


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
            def send(method: str, path: str, body: dict[str, Any], token: str) -> tuple[int, dict[str, Any]]:
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
