"""``loyalty``: serve the API, run the worker, migrate the database, create and read the back
office's plans, vendors, clients, branches and rewards. ``--help`` on every verb. (Developers
autogenerate migrations with ``just db-revision``, ``loyalty_api.revision``.)"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from loyalty_api import backoffice, backoffice_reads, migrate, preflight
from loyalty_api.settings import Settings, SettingsError


def main(argv: Sequence[str] | None = None) -> int:
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

    backoffice_reads.add_verbs(backoffice.add_verbs(verbs))

    args = parser.parse_args(argv)
    try:
        settings = Settings.from_env()
        result: int = args.run(settings, args)
    except SettingsError as exc:
        print(f"loyalty: {exc}", file=sys.stderr)
        return 2
    except preflight.StartFailure as exc:
        print(f"loyalty: {exc}", file=sys.stderr)
        return 1
    return result


@contextmanager
def _database(settings: Settings) -> Iterator[Settings]:
    """The settings with a database URL: the configured one, or the embedded server's."""
    if settings.database_url is not None:
        yield settings
        return
    from loyalty_api.embedded import EmbeddedPostgres

    embedded = EmbeddedPostgres(settings.home)
    print(f"loyalty: starting embedded PostgreSQL in {embedded.pgdata}", file=sys.stderr, flush=True)
    url = embedded.start()
    try:
        import msgspec

        yield msgspec.structs.replace(settings, database_url=url)
    finally:
        print("loyalty: stopping embedded PostgreSQL", file=sys.stderr, flush=True)
        embedded.stop()


def _serve(settings: Settings, args: argparse.Namespace) -> int:
    import msgspec
    from granian import Granian
    from granian.constants import Interfaces, Loops
    from granian.log import LogLevels

    from loyalty_api.logs import granian_logging

    overrides = {k: v for k, v in (("host", args.host), ("port", args.port), ("workers", args.workers)) if v}
    settings = msgspec.structs.replace(settings, **overrides)
    settings, notices = settings.with_secrets()
    for line in notices:
        print(f"loyalty: {line}", file=sys.stderr, flush=True)
    preflight.check_port(settings.host, settings.port)
    with _database(settings) as settings:
        assert settings.database_url is not None
        print("loyalty: migrating the database", file=sys.stderr, flush=True)
        preflight.migrate_database(settings.database_url)
        preflight.check_room(settings)
        os.environ.update(
            {
                "DATABASE_URL": settings.database_url,
                "LOYALTY_ADMIN_TOKEN": settings.admin_token or "",
                "LOYALTY_JWT_SECRET": settings.jwt_secret or "",
                "LOYALTY_ENCRYPTION_KEY": settings.encryption_key or "",
                "LOYALTY_HOST": settings.host,
                "LOYALTY_PORT": str(settings.port),
            }
        )
        if settings.workers > 1 and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(_metrics_dir(settings.home, settings.port))
        print(f"loyalty: serving on http://{settings.host}:{settings.port}", file=sys.stderr, flush=True)
        Granian(
            "loyalty_api.app:app_from_env",
            address=settings.host,
            port=settings.port,
            interface=Interfaces.ASGI,
            # named, not "auto": a missing uvloop fails the start instead of silently serving on asyncio's loop
            loop=Loops.uvloop,
            workers=settings.workers,
            factory=True,
            log_access=False,  # the app's access line names the route; granian's would repeat it
            log_level=LogLevels(settings.log_level.lower()),
            log_dictconfig=granian_logging(settings.log_format),
            workers_kill_timeout=30,
        ).serve()
    return 0


def _metrics_dir(home: Path, port: int) -> Path:
    """An empty directory this server's processes share for /metrics, so a scrape answers the sum
    over all of them (prometheus-client's multiprocess mode); one per port, emptied at each start."""
    folder = home / f"metrics-{port}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder


def _worker(settings: Settings, args: argparse.Namespace) -> int:
    from loyalty_api.adapters.pass_platforms import issuer_key, local_platform, wallet_passes
    from loyalty_api.logs import configure_logging
    from loyalty_api.worker import drain, make_job_context, make_queue, make_worker, within
    from loyalty_core.clock import SystemClock
    from loyalty_core.db import make_engine, make_sessionmaker

    configure_logging(settings.log_level, settings.log_format)
    with _database(settings) as settings:
        assert settings.database_url is not None

        async def run() -> None:
            engine = make_engine(settings.database_url or "")
            queue = make_queue(settings)
            await queue.connect()
            filled, _ = settings.with_secrets()
            passes = wallet_passes(
                filled.encryption_key or "",
                issuer_key(filled.wallet_issuer_key, filled.home),
                local_platform(filled.home),
            )
            worker = make_worker(queue, make_job_context(filled, make_sessionmaker(engine), SystemClock(), passes))
            stopping = asyncio.Event()
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(signum, stopping.set)
            task = asyncio.create_task(worker.start())
            print(
                "loyalty: worker running; SIGINT or SIGTERM finishes the jobs in hand and stops",
                file=sys.stderr,
                flush=True,
            )
            try:
                await stopping.wait()
                await drain(worker)
            finally:
                task.cancel()
                await within(5, asyncio.gather(task, return_exceptions=True), "stop the worker")
                await within(5, queue.disconnect(), "disconnect the queue")
                await engine.dispose()

        asyncio.run(run())
    return 0


def _db_upgrade(settings: Settings, args: argparse.Namespace) -> int:
    with _database(settings) as settings:
        assert settings.database_url is not None
        print(f"loyalty: migrating to {args.revision}", file=sys.stderr, flush=True)
        migrate.upgrade(settings.database_url, args.revision)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
