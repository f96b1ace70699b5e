"""The embedded PostgreSQL default: with no ``DATABASE_URL`` one is started in ``<home>/pgdata``."""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from loyalty_api.lifetimes import StopSignals
from loyalty_api.settings import Settings


class EmbeddedPostgres:
    """A pgserver instance, reused across starts (its data stays in ``pgdata``) and stopped on close."""

    def __init__(self, home: Path) -> None:
        self.pgdata = home.resolve() / "pgdata"
        self._server: Any = None

    def start(self) -> str:
        self.pgdata.parent.mkdir(parents=True, exist_ok=True)
        # pgserver's import asks platformdirs for a runtime directory, which warns where
        # XDG_RUNTIME_DIR is unset (containers, CI); it falls back to /tmp and works
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pgserver

            self._server = pgserver.get_server(self.pgdata, cleanup_mode="stop")  # type: ignore[attr-defined]
        return "postgresql+psycopg://postgres@/postgres?host=" + str(self.pgdata)

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None


@contextlib.contextmanager
def database_for(settings: Settings, signals: StopSignals) -> Iterator[Settings]:
    """The settings with a database URL: the configured one, or that of an embedded server started
    here and stopped on the way out, however the command ends. A stop signal never cuts its start or
    its stop in two (``signals.held``): the handle that stops it must exist, and the stop must finish."""
    if settings.database_url is not None:
        yield settings
        return
    embedded = EmbeddedPostgres(settings.home)
    print(f"loyalty: starting embedded PostgreSQL in {embedded.pgdata}", file=sys.stderr, flush=True)
    try:
        with signals.held():
            url = embedded.start()
        yield msgspec.structs.replace(settings, database_url=url)
    finally:
        with signals.held():
            print("loyalty: stopping embedded PostgreSQL", file=sys.stderr, flush=True)
            embedded.stop()
