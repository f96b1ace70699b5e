"""The embedded PostgreSQL default: with no ``DATABASE_URL`` one is started in ``<home>/pgdata``."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any


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
