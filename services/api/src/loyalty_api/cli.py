"""``loyalty``: serve the API, run the worker, migrate the database, create and read the back
office's plans, vendors, clients, branches and rewards. ``--help`` on every verb. (Developers
autogenerate migrations with ``just db-revision``, ``loyalty_api.revision``.)

Parsing the arguments imports nothing heavy: each verb imports what it needs when it runs, so
``--help`` and ``loyalty admin token`` answer at once (OPS-11); the web framework, the database
toolkit and the migrations load only for the verbs that use them. A verb that cannot start ends with
one line naming the cause and the setting to change (OPS-10).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from loyalty_api import backoffice, backoffice_reads
from loyalty_api.lifetimes import Stopped, StopSignals
from loyalty_api.preflight import StartFailure
from loyalty_api.settings import Settings, SettingsError


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        # from here on a stop signal is a line, not a traceback (and, for serve and worker, whose
        # normal end is a stop signal, a success) at whatever step the verb is
        with StopSignals():
            settings = Settings.from_env()
            result: int = args.run(settings, args)
    except SettingsError as exc:
        print(f"loyalty: {exc}", file=sys.stderr)
        return 2
    except StartFailure as exc:
        print(f"loyalty: {exc}", file=sys.stderr)
        return 1
    except Stopped as stopped:
        print(f"loyalty: stopped by {stopped}", file=sys.stderr)
        # what a shell reports for a command the signal ended, unless stopping is how it ends
        return 0 if args.run in (_serve, _worker) else 128 + stopped.signum
    return result


def parser() -> argparse.ArgumentParser:
    """Every verb, each with the function that runs it (``run``)."""
    parser = argparse.ArgumentParser(prog="loyalty", description="The loyalty-programme back end.")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    serve = verbs.add_parser(
        "serve",
        help="serve the HTTP API (migrates the database first)",
        description="Serve the HTTP API with granian. With no DATABASE_URL an embedded "
        "PostgreSQL is started in .loyalty/pgdata and stopped on exit.",
    )
    serve.add_argument("--host", help="listen address (default LOYALTY_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="listen port (default LOYALTY_PORT or 8000)")
    serve.add_argument("--workers", type=int, help="server processes (default LOYALTY_WORKERS or 1)")
    serve.set_defaults(run=_serve)

    worker = verbs.add_parser(
        "worker",
        help="run the SAQ job worker (for LOYALTY_WORKER=external)",
        description="Run queued and scheduled jobs until SIGINT/SIGTERM; finishes the jobs in hand before it exits.",
    )
    worker.set_defaults(run=_worker)

    db = verbs.add_parser("db", help="database maintenance", description="Database maintenance.")
    db_verbs = db.add_subparsers(dest="db_verb", required=True, metavar="ACTION")
    upgrade = db_verbs.add_parser(
        "upgrade",
        help="apply schema migrations up to a revision",
        description="Apply Alembic migrations (default: up to head).",
    )
    upgrade.add_argument("revision", nargs="?", default="head")
    upgrade.set_defaults(run=_db_upgrade)

    areas = backoffice.add_verbs(verbs)
    backoffice_reads.add_verbs(areas)
    check = areas["vendors"].add_parser(
        "reconcile",
        help="check the liability report: every month's closing against the balances (LIABILITY-4)",
        description="For every month of the vendor, compare the liability report's closing with the sum "
        "of its wallet balances at the month's end recomputed from the ledger; print every difference. "
        "Reads the database (DATABASE_URL) directly; exits 1 when a month differs.",
    )
    check.add_argument("id", type=int, help="the vendor's id")
    check.set_defaults(run=_reconcile)
    return parser


def _serve(settings: Settings, args: argparse.Namespace) -> int:
    from loyalty_api.serving import serve

    return serve(settings, host=args.host, port=args.port, workers=args.workers)


def _worker(settings: Settings, args: argparse.Namespace) -> int:
    # the watch starts before anything heavy is imported or connected: a parent that dies while
    # the worker starts (or waits for an unreachable database) ends it within OPS-8's 2 s too
    from loyalty_api.lifetimes import die_with_parent, end_quickly

    die_with_parent(os.getppid(), ask_kernel=False)
    from loyalty_api import preflight
    from loyalty_api.embedded import database_for

    with StopSignals() as signals, database_for(settings, signals) as settings:
        preflight.check(settings, at_head=True, redis="needed")
        from loyalty_api.worker import run

        run(settings)
    end_quickly()
    return 0


def _db_upgrade(settings: Settings, args: argparse.Namespace) -> int:
    from loyalty_api import preflight
    from loyalty_api.embedded import database_for

    with StopSignals() as signals, database_for(settings, signals) as settings:
        assert settings.database_url is not None
        preflight.check(settings)
        print(f"loyalty: migrating to {args.revision}", file=sys.stderr, flush=True)
        preflight.migrate_database(settings.database_url, args.revision)
    return 0


def _reconcile(settings: Settings, args: argparse.Namespace) -> int:
    from loyalty_api.embedded import database_for

    with StopSignals() as signals, database_for(settings, signals) as settings:
        assert settings.database_url is not None
        from loyalty_api.reconcile import run

        return run(settings.database_url, args.id)


if __name__ == "__main__":
    raise SystemExit(main())
