"""The portal is a second app over core's rules: it runs no SQL of its own (its reads are core's), and
every refusal it can raise has its status in core's one table."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import loyalty_portal
from loyalty_core.error_status import STATUS_BY_CODE
from loyalty_core.errors import DomainError

PORTAL = Path(loyalty_portal.__file__).parent
SESSION_TYPES = frozenset({"AsyncSession", "async_sessionmaker"})
"""What the portal may take from SQLAlchemy: the types of the session core's reads and services run on."""
QUERYING = frozenset({"execute", "scalar", "scalars", "stream", "stream_scalars", "connection", "get_raw_connection"})
"""Session methods that run a statement or hand out the connection to run one on (``stream`` only with
a statement: a request's body is streamed too)."""


def sql_of(source: str) -> list[str]:
    """What in ``source`` builds or runs SQL: a SQLAlchemy import beyond the session types, a call of
    a session's statement-running methods, a ``get`` of a model by its key."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name.split(".")[0] in ("sqlalchemy", "psycopg")]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("sqlalchemy", "psycopg"):
            names = {a.name for a in node.names}
            if node.module != "sqlalchemy.ext.asyncio" or not names <= SESSION_TYPES:
                found.append(f"from {node.module} import {', '.join(sorted(names))}")
        elif isinstance(node, ast.ImportFrom) and node.module == "loyalty_core.db":
            found.append(f"from loyalty_core.db import {', '.join(a.name for a in node.names)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in QUERYING and (node.args or node.func.attr != "stream"):
                found.append(f".{node.func.attr}() at line {node.lineno}")
            first = node.args[0] if node.args else None
            if (
                node.func.attr == "get"
                and isinstance(first, ast.Name)
                and first.id[:1].isupper()
                and not first.id.isupper()
            ):
                found.append(f".get({first.id}, ...) at line {node.lineno}")
    return found


def test_the_check_finds_sql_where_there_is_some() -> None:
    """PORTAL-4: each way of running SQL from a page is found."""
    source = """
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
import sqlalchemy.orm
from loyalty_core.db import driver_connection
async def page(db: AsyncSession) -> None:
    await db.execute(text("SELECT 1"))
    await db.scalars(select(Reward))
    async for chunk in request.stream():
        pass
    raw = await (await db.connection()).get_raw_connection()
    await db.get(Reward, 1)
    form.raw.get("name")
"""
    assert sorted(sql_of(source)) == sorted(
        [
            "from sqlalchemy import select, text",
            "from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession",
            "import sqlalchemy.orm",
            "from loyalty_core.db import driver_connection",
            ".execute() at line 7",
            ".scalars() at line 8",
            ".get_raw_connection() at line 11",
            ".connection() at line 11",
            ".get(Reward, ...) at line 12",
        ]
    )


def test_the_portal_has_no_sql_of_its_own() -> None:
    """PORTAL-4: every read of the portal's pages is core's; the portal holds only the session type."""
    found = {
        str(path.relative_to(PORTAL)): sql
        for path in sorted(PORTAL.rglob("*.py"))
        if (sql := sql_of(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_every_refusal_the_portal_raises_has_its_status_in_the_one_table() -> None:
    """PORTAL-1: the portal's own errors answer through core's code-to-status table too."""
    for module in pkgutil.walk_packages(loyalty_portal.__path__, "loyalty_portal."):
        importlib.import_module(module.name)
    found, stack = [], [DomainError]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.__module__.startswith("loyalty_portal.") and "code" in vars(cls):
            found.append(cls)
    assert found, "the portal raises refusals of its own (an import that is not found)"
    assert [cls.__name__ for cls in found if cls.code not in STATUS_BY_CODE] == []
