"""Settings from environment variables with the names and defaults docs/deployment.md lists (OPS-3)."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from loyalty_api.adapters.home_files import stored_once
from loyalty_api.settings import MIN_SECRET_BYTES, Settings, SettingsError

ADMIN = "a" * MIN_SECRET_BYTES
JWT = "j" * MIN_SECRET_BYTES


def test_defaults_are_the_documented_ones() -> None:
    s = Settings.from_env({})
    assert (s.database_url, s.redis_url) == (None, None)
    assert (s.host, s.port) == ("127.0.0.1", 8000)
    assert (s.admin_token, s.jwt_secret) == (None, None)
    assert s.token_ttl_seconds == 3600
    assert s.anon_rate_per_minute == 60
    assert s.max_rate_per_minute == 6000
    assert s.max_body_bytes == 1_048_576
    assert s.smtp_host is None
    assert s.public_url == "http://127.0.0.1:8000"
    assert s.test_mode is False
    assert s.worker == "in-process"
    assert (s.log_level, s.log_format) == ("INFO", "json")
    assert s.portal_owner_totp is False


def test_owners_second_factor_is_required_only_when_said() -> None:
    """STAFF-8's setting: `required` or `optional` (any case); anything else is refused by name."""
    assert Settings.from_env({"LOYALTY_PORTAL_OWNER_TOTP": "Required"}).portal_owner_totp is True
    assert Settings.from_env({"LOYALTY_PORTAL_OWNER_TOTP": "optional"}).portal_owner_totp is False
    with pytest.raises(SettingsError, match="LOYALTY_PORTAL_OWNER_TOTP='yes' must be 'required' or 'optional'"):
        Settings.from_env({"LOYALTY_PORTAL_OWNER_TOTP": "yes"})


def test_every_variable_is_read() -> None:
    s = Settings.from_env(
        {
            "DATABASE_URL": "postgresql://u@db:5432/loyalty",
            "REDIS_URL": "redis://cache:6379/0",
            "LOYALTY_HOST": "0.0.0.0",
            "LOYALTY_PORT": "9000",
            "LOYALTY_ADMIN_TOKEN": ADMIN,
            "LOYALTY_JWT_SECRET": JWT,
            "LOYALTY_TOKEN_TTL_SECONDS": "60",
            "LOYALTY_ANON_RATE_PER_MINUTE": "5",
            "LOYALTY_MAX_RATE_PER_MINUTE": "100",
            "LOYALTY_MAX_BODY_BYTES": "4096",
            "LOYALTY_SMTP_HOST": "mail",
            "LOYALTY_SMTP_PORT": "2525",
            "LOYALTY_MAIL_FROM": "shop@example.com",
            "LOYALTY_PUBLIC_URL": "https://loyalty.example.com/",
            "LOYALTY_TEST_MODE": "1",
            "LOYALTY_WORKER": "external",
            "LOYALTY_LOG_FORMAT": "Console",
            "LOYALTY_REDIS_PREFIX": "eu-1:shop",
        }
    )
    assert s.redis_namespace() == "eu-1:shop"
    assert s.database_url == "postgresql+psycopg://u@db:5432/loyalty"
    assert s.redis_url == "redis://cache:6379/0"
    assert (s.host, s.port, s.admin_token, s.jwt_secret) == ("0.0.0.0", 9000, ADMIN, JWT)
    assert (s.token_ttl_seconds, s.anon_rate_per_minute, s.max_rate_per_minute, s.max_body_bytes) == (60, 5, 100, 4096)
    assert (s.smtp_host, s.smtp_port, s.mail_from) == ("mail", 2525, "shop@example.com")
    assert s.public_url == "https://loyalty.example.com"
    assert s.test_mode is True
    assert s.worker == "external"
    assert s.log_format == "console"


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"LOYALTY_PORT": "eighty"}, "LOYALTY_PORT"),
        ({"LOYALTY_PORT": "70000"}, "LOYALTY_PORT"),
        ({"LOYALTY_TOKEN_TTL_SECONDS": "0"}, "LOYALTY_TOKEN_TTL_SECONDS"),
        ({"DATABASE_URL": "mysql://x"}, "DATABASE_URL"),
        ({"REDIS_URL": "http://x"}, "REDIS_URL"),
        ({"LOYALTY_TEST_MODE": "maybe"}, "LOYALTY_TEST_MODE"),
        ({"LOYALTY_WORKER": "sidecar"}, "LOYALTY_WORKER"),
        ({"LOYALTY_LOG_FORMAT": "xml"}, "LOYALTY_LOG_FORMAT"),
        ({"LOYALTY_REDIS_PREFIX": "two words"}, "LOYALTY_REDIS_PREFIX"),
        ({"LOYALTY_REDIS_PREFIX": "x" * 101}, "LOYALTY_REDIS_PREFIX"),
    ],
)
def test_a_bad_value_is_refused_naming_the_variable(env: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError, match=named):
        Settings.from_env(env)


def test_all_bad_values_are_named_at_once() -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({"LOYALTY_PORT": "x", "LOYALTY_MAX_BODY_BYTES": "y"})
    assert "LOYALTY_PORT" in str(caught.value)
    assert "LOYALTY_MAX_BODY_BYTES" in str(caught.value)


def test_secrets_are_generated_once_stored_and_reused(tmp_path: Path) -> None:
    """OPS-3: an unset admin token is generated at first start, stored in .loyalty/ and printed once."""
    base = Settings.from_env({"LOYALTY_HOME": str(tmp_path / ".loyalty")})
    first, notices = base.with_secrets()
    assert first.admin_token
    assert first.jwt_secret
    assert first.admin_token != first.jwt_secret
    assert len(notices) == 1
    assert first.admin_token in notices[0]
    second, again = base.with_secrets()
    assert (second.admin_token, second.jwt_secret) == (first.admin_token, first.jwt_secret)
    assert again == []
    assert (tmp_path / ".loyalty" / "admin-token").stat().st_mode & 0o077 == 0


def test_configured_secrets_win(tmp_path: Path) -> None:
    s, notices = Settings.from_env(
        {"LOYALTY_HOME": str(tmp_path), "LOYALTY_ADMIN_TOKEN": ADMIN, "LOYALTY_JWT_SECRET": JWT}
    ).with_secrets()
    assert (s.admin_token, s.jwt_secret, notices) == (ADMIN, JWT, [])


@pytest.mark.parametrize("name", ["LOYALTY_ADMIN_TOKEN", "LOYALTY_JWT_SECRET", "LOYALTY_ENCRYPTION_KEY"])
def test_a_secret_shorter_than_32_bytes_stops_the_start(name: str) -> None:
    """OPS-3: secrets shorter than 32 bytes stop the start, named."""
    with pytest.raises(SettingsError, match=f"{name} must be at least 32 bytes"):
        Settings.from_env({name: "x" * 31})
    assert getattr(Settings.from_env({name: "x" * 32}), name.removeprefix("LOYALTY_").lower()) == "x" * 32


@pytest.mark.parametrize("content", ["", "\n", "short-secret\n"])
def test_a_short_stored_secret_stops_the_start_naming_the_file(tmp_path: Path, content: str) -> None:
    """An empty or short stored JWT secret file was accepted; it now stops the start, naming the file."""
    (tmp_path / "jwt-secret").write_text(content)
    with pytest.raises(SettingsError, match=r"jwt-secret must be at least 32 bytes"):
        Settings.from_env({"LOYALTY_HOME": str(tmp_path)}).with_secrets()


def test_serve_refuses_a_short_secret_with_a_message(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from loyalty_api.cli import main

    monkeypatch.setenv("LOYALTY_JWT_SECRET", "too-short")
    assert main(["serve"]) == 2
    assert "LOYALTY_JWT_SECRET must be at least 32 bytes" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("env", "workers"),
    [
        ({}, 1),
        ({"REDIS_URL": "redis://127.0.0.1:6379/0"}, os.cpu_count() or 1),
        ({"REDIS_URL": "redis://127.0.0.1:6379/0", "LOYALTY_TEST_MODE": "1"}, 1),
        ({"LOYALTY_WORKERS": "4", "LOYALTY_TEST_MODE": "1"}, 1),
        ({"LOYALTY_WORKERS": "3"}, 3),
    ],
)
def test_process_count_follows_redis_and_test_mode(env: dict[str, str], workers: int) -> None:
    """One process by default (docs/deployment.md); one per core with REDIS_URL (a shared limiter); test mode one."""
    assert Settings.from_env(env).workers == workers


def test_processes_starting_together_share_one_generated_file(tmp_path: Path) -> None:
    """Several `loyalty serve` processes of the scale-out shape may start at once on one
    LOYALTY_HOME: each offers its own value, exactly one is stored, and every one reads it."""
    path = tmp_path / "home" / "jwt-secret"
    gate = threading.Barrier(8)

    def start(n: int) -> tuple[bytes, bool]:
        gate.wait()
        return stored_once(path, lambda: f"value of process {n}".encode())

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(start, range(8)))
    assert len({content for content, _ in results}) == 1
    assert sum(created for _, created in results) == 1
    assert path.read_bytes() == results[0][0]
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["jwt-secret"]  # nothing left aside
