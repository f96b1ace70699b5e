"""Settings from environment variables with the names and defaults of the back-office contract, section 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from loyalty_api.settings import Settings, SettingsError


def test_defaults_follow_the_contract() -> None:
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


def test_every_variable_is_read() -> None:
    s = Settings.from_env(
        {
            "DATABASE_URL": "postgresql://u@db:5432/loyalty",
            "REDIS_URL": "redis://cache:6379/0",
            "LOYALTY_HOST": "0.0.0.0",
            "LOYALTY_PORT": "9000",
            "LOYALTY_ADMIN_TOKEN": "adm",
            "LOYALTY_JWT_SECRET": "jwt",
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
        }
    )
    assert s.database_url == "postgresql+psycopg://u@db:5432/loyalty"
    assert s.redis_url == "redis://cache:6379/0"
    assert (s.host, s.port, s.admin_token, s.jwt_secret) == ("0.0.0.0", 9000, "adm", "jwt")
    assert (s.token_ttl_seconds, s.anon_rate_per_minute, s.max_rate_per_minute, s.max_body_bytes) == (60, 5, 100, 4096)
    assert (s.smtp_host, s.smtp_port, s.mail_from) == ("mail", 2525, "shop@example.com")
    assert s.public_url == "https://loyalty.example.com"
    assert s.test_mode is True
    assert s.worker == "external"


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
    """Contract 1: an unset admin token is generated at first start, stored in .loyalty/ and printed once."""
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
        {"LOYALTY_HOME": str(tmp_path), "LOYALTY_ADMIN_TOKEN": "mine", "LOYALTY_JWT_SECRET": "also-mine"}
    ).with_secrets()
    assert (s.admin_token, s.jwt_secret, notices) == ("mine", "also-mine", [])
