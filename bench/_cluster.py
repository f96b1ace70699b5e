"""A PostgreSQL cluster of the bench's own, for figures the shared server cannot give.

``LOYALTY_BENCH_OWN_POSTGRES=1 uv run just bench <name>``: before any benchmark module is imported,
``python -m bench`` runs ``initdb`` (Debian's ``/usr/lib/postgresql/15/bin``, or
``LOYALTY_BENCH_PG_BIN``) in a temporary directory, starts ``postgres`` on a free port of 127.0.0.1
with ``shared_preload_libraries = pg_stat_statements`` (the per-statement figures of
``bench.pg_cost``) and points ``LOYALTY_BENCH_DATABASE_URL`` at it; the cluster is stopped and its
directory removed when the bench exits. Unset, the benchmarks use the shared server as before.

Its settings are the shared server's that matter to a write's cost (fsync and synchronous commit on,
WAL level replica, full-page writes), with room for both servers' pools.
"""

from __future__ import annotations

import atexit
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(os.environ.get("LOYALTY_BENCH_PG_BIN", "/usr/lib/postgresql/15/bin"))
SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "shared_preload_libraries": "pg_stat_statements",
    "pg_stat_statements.max": "2000",
    "pg_stat_statements.track": "all",
    "track_io_timing": "on",
    "max_connections": "200",
    "shared_buffers": "128MB",
    "max_wal_size": "1GB",
    "wal_level": "replica",
    "fsync": "on",
    "synchronous_commit": "on",
    "full_page_writes": "on",
}


def wanted() -> bool:
    return os.environ.get("LOYALTY_BENCH_OWN_POSTGRES", "") not in ("", "0")


def _as_owner(argv: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: as root, the cluster runs as the ``postgres`` system user."""
    if os.geteuid() != 0:
        return argv
    return ["runuser", "-u", os.environ.get("LOYALTY_BENCH_PG_USER", "postgres"), "--", *argv]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start() -> str:
    """initdb, start, wait until it answers; answers its libpq URL (also set in the environment)."""
    home = Path(tempfile.mkdtemp(prefix="bench-postgres-"))
    data, sockets = home / "data", home / "sockets"
    sockets.mkdir()
    if os.geteuid() == 0:
        owner = pwd.getpwnam(os.environ.get("LOYALTY_BENCH_PG_USER", "postgres"))
        for path in (home, sockets):
            os.chown(path, owner.pw_uid, owner.pw_gid)
    subprocess.run(
        _as_owner([str(BIN / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]),
        check=True,
        capture_output=True,
    )
    port = _free_port()
    argv = [str(BIN / "pg_ctl"), "-D", str(data), "-l", str(home / "postgres.log"), "-w", "start", "-o"]
    options = [f"-p {port}", f"-k {sockets}", *(f"-c {k}={v}" for k, v in SETTINGS.items())]
    subprocess.run(_as_owner([*argv, " ".join(options)]), check=True, capture_output=True)

    def stop() -> None:
        subprocess.run(
            _as_owner([str(BIN / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]), capture_output=True
        )
        shutil.rmtree(home, ignore_errors=True)

    atexit.register(stop)
    # a bench stopped with SIGTERM still stops its cluster (atexit runs on SystemExit, not on a signal)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    deadline = time.monotonic() + 30
    while subprocess.run([str(BIN / "pg_isready"), "-h", "127.0.0.1", "-p", str(port)], capture_output=True).returncode:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the bench's PostgreSQL did not start; see {home / 'postgres.log'}")
        time.sleep(0.2)
    os.environ["LOYALTY_BENCH_DATABASE_URL"] = url
    os.environ["LOYALTY_BENCH_PG_DATA"] = str(data)  # bench._pgstats reads its WAL
    print(f"bench: own PostgreSQL cluster at {url} (data in {data})", flush=True)
    return url
