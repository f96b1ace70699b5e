"""Settings from environment variables (OPS-3; docs/deployment.md), validated at start."""

from __future__ import annotations

import ipaddress
import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Literal
from urllib.parse import unquote

import msgspec

from loyalty_api.adapters.home_files import stored_once


class SettingsError(ValueError):
    """One or more environment variables hold a value the service cannot use."""


MIN_SECRET_BYTES = 32
"""Tokens are HS256-signed and unsubscribe links derive from the JWT secret: a short secret could be
guessed offline, so the service refuses to start with one."""


REDIS_PREFIX = re.compile(r"[A-Za-z0-9_.:-]{1,100}")


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    database_url: str | None = None
    redis_url: str | None = None
    redis_prefix: str | None = None
    """``LOYALTY_REDIS_PREFIX``: this deployment's namespace on a shared Redis; unset, the database's
    name (see ``redis_namespace``)."""
    host: str = "127.0.0.1"
    port: int = 8000
    admin_token: str | None = None
    jwt_secret: str | None = None
    encryption_key: str | None = None
    token_ttl_seconds: int = 3600
    anon_rate_per_minute: int = 60
    max_rate_per_minute: int = 6000
    max_body_bytes: int = 1_048_576
    wallet_issuer_key: Path | None = None
    """The platform_b issuer key (PEM file); unset: generated under ``home``."""
    wallet_push_url: str = "https://api.push.apple.com"
    """platform_a's push service, told of changed passes outside test mode (PASS-19)."""
    wallet_objects_url: str = "https://walletobjects.googleapis.com"
    """platform_b's object API, and the token endpoint its issuer account signs in at (PASS-16)."""
    wallet_token_url: str = "https://oauth2.googleapis.com/token"
    smtp_host: str | None = None
    smtp_port: int = 25
    mail_from: str = "loyalty@localhost"
    public_url: str = ""
    test_mode: bool = False
    worker: Literal["in-process", "external"] = "in-process"
    home: Path = Path(".loyalty")
    workers: int = 1
    db_pool_size: int = 10
    webhook_concurrency: int = 32
    """``LOYALTY_WEBHOOK_CONCURRENCY``: webhook attempts a job worker sends at once."""
    webhook_endpoint_concurrency: int = 8
    """``LOYALTY_WEBHOOK_ENDPOINT_CONCURRENCY``: of those, at most this many to one endpoint."""
    trusted_proxies: tuple[str, ...] = ()
    portal_owner_totp: bool = False
    """``LOYALTY_PORTAL_OWNER_TOTP=required``: every portal owner must use two-factor sign-in."""
    log_level: str = "INFO"
    log_format: Literal["json", "console"] = "json"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        problems: list[str] = []

        def text(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        def whole(name: str, default: int, low: int, high: int) -> int:
            raw = text(name)
            if raw is None:
                return default
            try:
                value = int(raw)
            except ValueError:
                problems.append(f"{name}={raw!r} is not a whole number")
                return default
            if not low <= value <= high:
                problems.append(f"{name}={value} is outside {low}..{high}")
            return value

        database_url = text("DATABASE_URL")
        if database_url is not None:
            database_url = normalize_database_url(database_url)
            if database_url is None:
                problems.append("DATABASE_URL must be a postgresql:// or postgresql+psycopg:// URL")
        redis_url = text("REDIS_URL")
        if redis_url is not None and not redis_url.startswith(("redis://", "rediss://", "unix://")):
            problems.append("REDIS_URL must be a redis://, rediss:// or unix:// URL")
        redis_prefix = text("LOYALTY_REDIS_PREFIX")
        if redis_prefix is not None and not REDIS_PREFIX.fullmatch(redis_prefix):
            problems.append("LOYALTY_REDIS_PREFIX must be 1 to 100 letters, digits or _.:-")
        test_raw = (text("LOYALTY_TEST_MODE") or "0").lower()
        if test_raw not in ("0", "1", "true", "false", "yes", "no", "on", "off"):
            problems.append(f"LOYALTY_TEST_MODE={test_raw!r} must be 1 or 0")
        worker = (text("LOYALTY_WORKER") or "in-process").lower()
        log_format = (text("LOYALTY_LOG_FORMAT") or "json").lower()
        if worker not in ("in-process", "external"):
            problems.append(f"LOYALTY_WORKER={worker!r} must be 'external' or unset")
        for name in ("LOYALTY_ADMIN_TOKEN", "LOYALTY_JWT_SECRET", "LOYALTY_ENCRYPTION_KEY"):
            secret = text(name)
            if secret is not None and len(secret.encode()) < MIN_SECRET_BYTES:
                problems.append(f"{name} must be at least {MIN_SECRET_BYTES} bytes long")
        test_mode = test_raw in ("1", "true", "yes", "on")
        # one process by default: without a shared limiter each process would count on its own;
        # with Redis, one per core; test mode keeps its clock in one process
        default_workers = (os.cpu_count() or 1) if redis_url is not None and not test_mode else 1
        proxies = tuple(p.strip() for p in (text("LOYALTY_TRUSTED_PROXIES") or "").split(",") if p.strip())
        for proxy in proxies:
            try:
                ipaddress.ip_network(proxy, strict=False)
            except ValueError:
                problems.append(f"LOYALTY_TRUSTED_PROXIES holds {proxy!r}, not an address or network")
        owner_totp = (text("LOYALTY_PORTAL_OWNER_TOTP") or "optional").lower()
        if owner_totp not in ("required", "optional"):
            problems.append(f"LOYALTY_PORTAL_OWNER_TOTP={owner_totp!r} must be 'required' or 'optional'")
        host = text("LOYALTY_HOST") or "127.0.0.1"
        port = whole("LOYALTY_PORT", 8000, 1, 65535)
        settings = cls(
            database_url=database_url,
            redis_url=redis_url,
            redis_prefix=redis_prefix,
            host=host,
            port=port,
            admin_token=text("LOYALTY_ADMIN_TOKEN"),
            jwt_secret=text("LOYALTY_JWT_SECRET"),
            encryption_key=text("LOYALTY_ENCRYPTION_KEY"),
            token_ttl_seconds=whole("LOYALTY_TOKEN_TTL_SECONDS", 3600, 1, 31_536_000),
            anon_rate_per_minute=whole("LOYALTY_ANON_RATE_PER_MINUTE", 60, 1, 10_000_000),
            max_rate_per_minute=whole("LOYALTY_MAX_RATE_PER_MINUTE", 6000, 1, 10_000_000),
            max_body_bytes=whole("LOYALTY_MAX_BODY_BYTES", 1_048_576, 1024, 1_073_741_824),
            wallet_issuer_key=Path(p) if (p := text("LOYALTY_WALLET_ISSUER_KEY")) else None,
            wallet_push_url=text("LOYALTY_WALLET_PUSH_URL") or "https://api.push.apple.com",
            wallet_objects_url=text("LOYALTY_WALLET_OBJECTS_URL") or "https://walletobjects.googleapis.com",
            wallet_token_url=text("LOYALTY_WALLET_TOKEN_URL") or "https://oauth2.googleapis.com/token",
            smtp_host=text("LOYALTY_SMTP_HOST"),
            smtp_port=whole("LOYALTY_SMTP_PORT", 25, 1, 65535),
            mail_from=text("LOYALTY_MAIL_FROM") or "loyalty@localhost",
            public_url=(text("LOYALTY_PUBLIC_URL") or f"http://{host}:{port}").rstrip("/"),
            test_mode=test_mode,
            worker="external" if worker == "external" else "in-process",
            home=Path(text("LOYALTY_HOME") or ".loyalty"),
            workers=1 if test_mode else whole("LOYALTY_WORKERS", default_workers, 1, 256),
            db_pool_size=whole("LOYALTY_DB_POOL_SIZE", 10, 1, 1000),
            webhook_concurrency=whole("LOYALTY_WEBHOOK_CONCURRENCY", 32, 1, 1000),
            webhook_endpoint_concurrency=whole("LOYALTY_WEBHOOK_ENDPOINT_CONCURRENCY", 8, 1, 1000),
            trusted_proxies=proxies,
            portal_owner_totp=owner_totp == "required",
            log_level=(text("LOYALTY_LOG_LEVEL") or "INFO").upper(),
            log_format="console" if log_format == "console" else "json",
        )
        if settings.log_level not in ("DEBUG", "INFO", "WARNING", "ERROR"):
            problems.append(f"LOYALTY_LOG_LEVEL={settings.log_level!r} must be DEBUG, INFO, WARNING or ERROR")
        if log_format not in ("json", "console"):
            problems.append(f"LOYALTY_LOG_FORMAT={log_format!r} must be json or console")
        if problems:
            raise SettingsError("invalid settings: " + "; ".join(problems))
        return settings

    def redis_namespace(self) -> str:
        """What every Redis key of this deployment starts with, and its job queue's name: two
        deployments sharing one Redis must never take each other's jobs or count in each other's rate
        windows. ``LOYALTY_REDIS_PREFIX``, else the name of the deployment's database (deployments
        on one Redis usually have databases of their own), else ``loyalty``."""
        if self.redis_prefix:
            return self.redis_prefix
        return database_name(self.database_url) if self.database_url else "loyalty"

    def with_secrets(self) -> tuple[Settings, list[str]]:
        """Fill an unset admin token, JWT secret and encryption key from ``home``, generating them at
        first start. A stored secret shorter than ``MIN_SECRET_BYTES`` (an empty file, say) stops the
        start with a ``SettingsError`` naming the file.

        Returns the settings and the lines to print once (a newly generated admin token).
        """
        notices: list[str] = []
        admin = self.admin_token or _stored_secret(self.home / "admin-token", notices, "admin token")
        jwt = self.jwt_secret or _stored_secret(self.home / "jwt-secret", [], "JWT secret")
        key = self.encryption_key or _stored_secret(self.home / "encryption-key", [], "encryption key")
        return msgspec.structs.replace(self, admin_token=admin, jwt_secret=jwt, encryption_key=key), notices


def normalize_database_url(url: str) -> str | None:
    for prefix in ("postgresql+psycopg://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return None


def database_name(url: str) -> str:
    """The database a URL names (its path), ``postgres`` when it names none, as libpq defaults."""
    path = url.split("://", 1)[-1].split("?", 1)[0]
    name = path.split("/", 1)[1] if "/" in path else ""
    return unquote(name) or "postgres"


def libpq_url(url: str) -> str:
    """The same URL as psycopg and SAQ read it, without SQLAlchemy's driver suffix."""
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def _stored_secret(path: Path, notices: list[str], what: str) -> str:
    raw, created = stored_once(path, lambda: (secrets.token_urlsafe(32) + "\n").encode())
    value = raw.decode().strip()
    if created:
        notices.append(f"generated {what} (stored in {path}): {value}")
    elif len(value.encode()) < MIN_SECRET_BYTES:
        raise SettingsError(f"the {what} stored in {path} must be at least {MIN_SECRET_BYTES} bytes long")
    return value
