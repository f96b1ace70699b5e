"""``python -m loyalty_api.revision -m MESSAGE`` (the ``just db-revision`` recipe): autogenerate a
migration from loyalty_core's models, for developers.

It is kept out of the operator's ``loyalty`` command, which only ever applies migrations. It runs
against ``DATABASE_URL``, a scratch database it first brings to head, never the embedded one that
``loyalty serve`` keeps a shop's data in.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from loyalty_api import migrate


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="just db-revision",
        description="Autogenerate an Alembic migration from loyalty_core's models against DATABASE_URL "
        "(a scratch database: it is first migrated to head).",
    )
    parser.add_argument("-m", "--message", required=True, help="what the migration does, e.g. 'add products'")
    args = parser.parse_args(argv)
    url = os.environ.get("DATABASE_URL")
    if not url:
        print("db-revision: set DATABASE_URL to a scratch PostgreSQL database", file=sys.stderr)
        return 2
    migrate.upgrade(url)
    migrate.revision(url, args.message)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
