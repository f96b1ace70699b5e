"""``python -m loyalty_http.openapi.export DIR``: write ``openapi-public.json`` and
``openapi-admin.json`` into DIR (``just openapi`` writes them into docs/), from the routes the
service mounts outside test mode. No database is reached: the engine is never connected."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from litestar import Litestar

from loyalty_core.clock import SystemClock
from loyalty_core.db import make_engine, make_sessionmaker
from loyalty_http.config import HttpConfig, Readiness
from loyalty_http.openapi.document import Audience, build_document
from loyalty_http.plugin import LoyaltyHttp

FILES: dict[Audience, str] = {"public": "openapi-public.json", "admin": "openapi-admin.json"}


async def _never_ready() -> Readiness:
    return Readiness(database_ok=False, status="degraded", checks={})


def service_app() -> Litestar:
    """The HTTP layer as the service composes it, over an engine that is never connected."""
    engine = make_engine("postgresql+psycopg://unused@127.0.0.1/unused")
    config = HttpConfig(
        sessionmaker=make_sessionmaker(engine),
        clock=SystemClock(),
        admin_token="unused",
        jwt_secret="unused-secret-of-a-proper-length-32b",
        readiness=_never_ready,
    )
    return Litestar(plugins=[LoyaltyHttp(config)], logging_config=None)


def rendered(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def documents() -> dict[str, str]:
    """File name -> its text, for every document."""
    app = service_app()
    return {name: rendered(build_document(app, audience)) for audience, name in FILES.items()}


def main(argv: list[str]) -> int:
    target = Path(argv[0] if argv else "docs")
    for name, text in documents().items():
        (target / name).write_text(text, encoding="utf-8")
        print(f"wrote {target / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
