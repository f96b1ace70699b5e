"""Redeeming a reward and verifying its code against the same SQL run bare.

``uv run just bench redemptions [--duration 15 --connections 32 --rounds 3 --warmup 3 --workers 2
--customers 1000 --calls redeem,verify --codes-rate 20000 --profile]``

As ``bench.request_path``: on a fresh database ``loyalty serve`` (granian, uvloop, test mode off)
migrates the schema; one vendor registers ``--customers`` customers through the public API, gives
each of them points through ``POST /customers/{id}/wallet/adjust`` (far more than the run spends)
and makes one plain reward through the admin API. The raw app (``bench._raw_app``) runs the same
writes on bare psycopg. wrk drives ``POST /api/v1/redemptions`` (a random customer by card, a new
idempotency key per request) and ``POST /api/v1/redemptions/{code}/verify`` (each code once) at
both, the order of the two alternating over the rounds. Verify's codes are valid codes made by the
earlier redeem runs, topped up by copies of those rows under new codes (a copy is the same row to
a verify) so that no run runs out: ``--codes-rate`` codes per second of load are set aside for
each verify run and its warm-up.
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

import httpx
import psycopg

from bench import _load, _profile, _servers
from bench._support import scratch_name
from bench.request_path import _max_connections

DATABASE = scratch_name("loyalty_bench_redemptions")
LUA = Path(__file__).parent / "wrk" / "redemptions.lua"
POINTS = 1_000_000
COST = 10
CALLS = {
    "redeem": f"`POST /api/v1/redemptions` (a {COST}-point reward, a random customer by card, new key)",
    "verify": "`POST /api/v1/redemptions/{code}/verify` (each code once)",
}

# copies of the redeemed rows under new codes "<prefix>-V<7 hex digits>"; only verify reads them
COPY = """
WITH source AS (
  SELECT r.*, row_number() OVER (ORDER BY r.id) - 1 AS n FROM redemptions r WHERE r.idempotency_key IS NOT NULL
)
INSERT INTO redemptions (vendor_id, reward_id, customer_id, branch_id, confirmation_code, status, points_deducted,
                         remaining_balance, ledger_entry_id, taken_lots, reward_name, reward_type, discount_type,
                         discount_value, product_reference, payment_amount, redeemed_at, expires_at, created_at,
                         updated_at)
SELECT s.vendor_id, s.reward_id, s.customer_id, s.branch_id,
       left(s.confirmation_code, 5) || 'V' || upper(lpad(to_hex(g), 7, '0')), 'valid', s.points_deducted,
       s.remaining_balance, s.ledger_entry_id, s.taken_lots, s.reward_name, s.reward_type, s.discount_type,
       s.discount_value, s.product_reference, s.payment_amount, now(), NULL, now(), now()
  -- the count is computed once, so the join is a hash join on n (a per-row count made it a nested loop)
  FROM generate_series(%(first)s::bigint, %(last)s::bigint) g
  JOIN source s ON s.n = g %% (SELECT count(*) FROM redemptions WHERE idempotency_key IS NOT NULL)
ON CONFLICT (vendor_id, confirmation_code) DO NOTHING
"""


def _options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench redemptions", description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=15, help="seconds of measured load per run")
    parser.add_argument("--connections", type=int, default=32, help="wrk connections")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=float, default=3, help="seconds of unmeasured load before each run")
    _load.add_prime(parser)
    parser.add_argument("--workers", type=int, default=2, help="server processes of each server")
    parser.add_argument("--customers", type=int, default=1000)
    parser.add_argument("--calls", default="redeem,verify", help="comma-separated: redeem, verify")
    parser.add_argument(
        "--codes-rate",
        type=int,
        # the bare verify answers about 9,500/s with 2 workers on 16 cores: 8,000 ran it out of codes
        default=20000,
        help="codes set aside per second of verify load (more than it verifies)",
    )
    parser.add_argument("--profile", action="store_true", help="py-spy one service worker per call, after the rounds")
    options = parser.parse_args(argv)
    options.calls = [c for c in options.calls.split(",") if c]
    unknown = set(options.calls) - set(CALLS)
    if unknown:
        parser.error(f"unknown calls: {', '.join(sorted(unknown))}")
    return options


COUNT_SOURCE = "SELECT 1 FROM redemptions WHERE idempotency_key IS NOT NULL LIMIT 1"


def _give_points_and_reward(service: _servers.Server, seeded: _servers.Seeded) -> int:
    """Every customer gets ``POINTS`` through the API; one plain reward (no stock, no limit, no
    branches, no expiry) is made through the admin API. Answers the reward's id."""
    headers = {"Authorization": f"Bearer {seeded.token}"}
    with httpx.Client(base_url=service.url, timeout=30) as client:
        for n, (customer, _) in enumerate(seeded.customers):
            body = {"amount": POINTS, "reason": "bench", "idempotency_key": f"seed-{customer}"}
            response = client.post(f"/api/v1/customers/{customer}/wallet/adjust", json=body, headers=headers)
            if response.status_code != 201:
                raise RuntimeError(f"adjust: {response.status_code} {response.text}")
            if n % 250 == 249:
                print(f"bench: {n + 1} customers have their points", flush=True)
        reward = {"type": "free_product", "name": "Coffee", "point_cost": COST, "product_reference": "COFFEE"}
        admin = {"Authorization": f"Bearer {_servers.ADMIN_TOKEN}"}
        response = client.post(f"/admin/v1/vendors/{seeded.vendor_id}/rewards", json=reward, headers=admin)
        if response.status_code != 201:
            raise RuntimeError(f"reward: {response.status_code} {response.text}")
        return int(response.json()["data"]["id"])


class Codes:
    """Hands out valid codes in id order, each once: those the redeem runs made, then copies."""

    def __init__(self, conn: psycopg.Connection[tuple[object, ...]]) -> None:
        self._conn, self._after, self._copies = conn, 0, 0

    def take(self, count: int, out: Path) -> Path:
        query = "SELECT id, confirmation_code FROM redemptions WHERE status = 'valid' AND id > %s ORDER BY id LIMIT %s"
        rows = self._conn.execute(query, (self._after, count)).fetchall()
        if len(rows) < count and not self._conn.execute(COUNT_SOURCE).fetchone():
            # copies are made of redeemed rows: with none, the loop below would never end
            raise SystemExit("bench redemptions: verify needs redeem runs first (--calls redeem,verify)")
        while len(rows) < count:
            first = self._copies + 1
            self._copies += count - len(rows)
            self._conn.execute(COPY, {"first": first, "last": self._copies})
            rows += self._conn.execute(query, (rows[-1][0] if rows else self._after, count - len(rows))).fetchall()
        self._conn.execute("ANALYZE redemptions")
        self._after = int(str(rows[-1][0]))
        out.write_text("".join(f"{code}\n" for _, code in rows))
        return out


class Load:
    """The data files and arguments of one call's wrk runs."""

    def __init__(self, options: argparse.Namespace, customers: Path, codes: Codes, reward: int, work: Path) -> None:
        self.options, self.customers, self.codes, self.work = options, customers, codes, work
        self.extra = (str(reward), str(_load.THREADS))

    def data(self, call: str, name: str, seconds: float) -> Path:
        if call == "redeem":
            return self.customers
        return self.codes.take(max(1, round(self.options.codes_rate * seconds)), self.work / f"codes-{name}.txt")


def run(argv: list[str] | None = None) -> str:
    options = _options(argv or [])
    bench = _load.Bench(options, DATABASE, "redemptions")
    started, load_before, database_url, work = bench.started, bench.load_before, bench.database_url, bench.work
    service = bench.service

    first = service()
    try:
        print(f"bench: registering {options.customers} customers through the API", flush=True)
        seeded = _servers.seed(first, options.customers)
        print(f"bench: giving each customer {POINTS:,} points; making the reward", flush=True)
        reward = _give_points_and_reward(first, seeded)
    finally:
        first.stop()
    _servers.settle_statistics(database_url, analyse=True)

    raw = bench.raw(seeded.vendor_id)

    customers = work / "customers.txt"
    customers.write_text("".join(f"{cid} {card}\n" for cid, card in seeded.customers))
    plain = database_url.replace("postgresql+psycopg://", "postgresql://", 1)
    with psycopg.connect(plain, autocommit=True) as conn:
        load = Load(options, customers, Codes(conn), reward, work)
        servers = {"service": service, "raw": raw}
        runs = _load.ab_rounds(options, servers, DATABASE, seeded.token, load.data, script=LUA, extra=load.extra)
        profile = (
            _profile.profile_calls(
                options,
                service,
                seeded.token,
                load.data,
                bench="redemptions",
                calls=CALLS,
                script=LUA,
                extra=load.extra,
            )
            if options.profile
            else []
        )
    return _report(options, argv or [], started, load_before, bench.pool, runs, profile)


def _report(
    options: argparse.Namespace,
    argv: list[str],
    started: dt.datetime,
    load_before: tuple[float, float, float],
    pool: int,
    runs: _load.Runs,
    profile: list[str],
) -> str:
    command = " ".join(["uv run just bench redemptions", *argv])
    intro = [
        "wrk, both servers and PostgreSQL share the machine's cores, so absolute figures move with whatever",
        "else runs (see the load averages); the rounds alternate service and raw, and the ratios of runs made",
        "back to back are the figures to read.",
    ]
    about = [
        f"Setup: `loyalty serve --workers {options.workers}` (granian, uvloop, test mode off, log level WARNING,"
        " in-process job worker, rate limiter in process memory; plan limit 10,000,000/min) and the raw app"
        f" (`bench/_raw_app.py`: granian {options.workers} workers, uvloop, psycopg `AsyncConnectionPool` of"
        f" {pool} connections per process, no auth). {options.customers:,} customers of one vendor registered"
        f" through `POST /api/v1/customers`, each given {POINTS:,} points through"
        " `POST /api/v1/customers/{id}/wallet/adjust`, one reward made through"
        f" `POST /admin/v1/vendors/{{id}}/rewards` (free product, {COST} points, no stock, limit, branches or"
        f" expiry); then `VACUUM ANALYZE`. wrk `-t{_load.THREADS} -c{options.connections}"
        f" -d{options.duration:g}s` after a {options.warmup:g} s warm-up; {options.rounds} round(s), the order"
        " of service and raw alternating. Redeem: a random customer by loyalty card and a new idempotency key"
        " per request. Verify: every code sent once; the codes are the valid ones the redeem runs made,"
        " topped up with copies of those rows under new codes, set aside before each run (not timed). CPU,"
        " sessions and backends are measured as in `bench/results/request-path.md` (PostgreSQL's"
        f" `max_connections` is {_max_connections()}, shared with everything else on the server); each run"
        " starts its server afresh with the other one stopped.",
        "The raw app runs the redemption's SQL the plain way, one statement per round trip: the key's"
        " advisory lock, the customer by card with its wallet locked, the key check, the reward (with its"
        " branch count and the vendor's code prefix), the entry insert, one update per lot taken, the wallet"
        " update and the redemption insert (its code's uniqueness left to `ON CONFLICT`). The service makes"
        " the same writes in two round trips (`loyalty_core/redemptions/till_redeem.py`): one pipeline with"
        " BEGIN, the key's lock, the wallet's lock and one read of everything its checks need, then one"
        " statement for stock, entry, lots, balance and redemption pipelined with COMMIT. Verify is the same"
        " one conditional `UPDATE ... RETURNING` in both; the service's rides on its token check's statement"
        " (a write condition that holds only for a caller the check admits), one round trip in all.",
    ]
    title = "Redemptions and verifies against the same SQL run bare"
    return _load.ab_report(
        title, command, started, load_before, options, runs, about=about, calls=CALLS, profile=profile, intro=intro
    )
