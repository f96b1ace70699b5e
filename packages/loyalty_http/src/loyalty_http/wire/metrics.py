"""Prometheus metrics (OPS-2: ``GET /metrics``, admin token, Prometheus text).

Kept by each server process: requests by route and status and their durations, rate-limit
refusals, database pool use. Read from PostgreSQL and the job queue at each scrape, so they are
exact whichever process (an API process, the job worker) did the work: points by kind, redemptions
by state, the queue's depth and failures. docs/deployment.md lists every name.

Routes are labelled by their template (``/api/v1/customers/{customer}/wallet``), never by the path
a client sent, so the number of series stays bounded whatever is requested; a path that matched no
route is labelled ``unmatched``. With several server processes, set ``PROMETHEUS_MULTIPROC_DIR``
to a directory they share and each scrape answers the sum over all of them.
"""

from __future__ import annotations

import os
import weakref
from dataclasses import dataclass
from typing import Any, Final

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from sqlalchemy import event

from loyalty_core.events.reads import WebhookTotals

CONTENT_TYPE: Final = CONTENT_TYPE_LATEST
UNMATCHED: Final = "unmatched"
_BUCKETS: Final = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

REGISTRY: Final = CollectorRegistry(auto_describe=True)
REQUESTS: Final = Counter(
    "loyalty_http_requests",
    "HTTP requests answered, by method, route template and status.",
    ("method", "route", "status"),
    registry=REGISTRY,
)
LATENCY: Final = Histogram(
    "loyalty_http_request_duration_seconds",
    "Time from the request's arrival to the start of its answer, by method and route template.",
    ("method", "route"),
    buckets=_BUCKETS,
    registry=REGISTRY,
)


@dataclass(frozen=True, slots=True)
class QueueStats:
    """The job queue as ``GET /metrics`` shows it: jobs waiting, running and scheduled, and the jobs
    that failed in the workers running now (each worker counts from its own start)."""

    queued: int
    active: int
    scheduled: int
    failed: int


WALLET_PUSHES: Final = Counter(
    "loyalty_wallet_pushes",
    "Pushes and platform_b object updates the pass-updates job sent, by outcome (sent, failed, gone).",
    ("outcome",),
    registry=REGISTRY,
)
REFUSALS: Final = Counter(
    "loyalty_rate_limit_refusals",
    "Requests refused with 429 RATE_LIMITED, by the window that was full (vendor or address).",
    ("window",),
    registry=REGISTRY,
)
POOL_IN_USE: Final = Gauge(
    "loyalty_db_pool_in_use",
    "Database connections checked out of the server processes' pools.",
    registry=REGISTRY,
    multiprocess_mode="livesum",
)
POOL_SIZE: Final = Gauge(
    "loyalty_db_pool_size",
    "Database connections the server processes keep in their pools.",
    registry=REGISTRY,
    multiprocess_mode="livesum",
)


@dataclass(frozen=True, slots=True)
class Scraped:
    """What one scrape read from PostgreSQL and the job queue; None where the source did not answer."""

    points: dict[str, int] | None
    redemptions: dict[str, int] | None
    queue: QueueStats | None
    card_mails: dict[str, int] | None = None
    webhooks: WebhookTotals | None = None
    pass_registrations: dict[str, int] | None = None


def _families(scraped: Scraped) -> list[Any]:
    up = GaugeMetricFamily("loyalty_database_up", "1 when this scrape could read PostgreSQL.")
    up.add_metric([], 1 if scraped.points is not None else 0)
    families: list[Any] = [up]
    if scraped.points is not None:
        points = CounterMetricFamily(
            "loyalty_points",
            "Points moved since the service began, over all vendors, by kind: earned, redeemed,"
            " expired, adjusted_in, adjusted_out (from the ledger).",
            labels=("kind",),
        )
        for kind, value in scraped.points.items():
            points.add_metric([kind], value)
        families.append(points)
    if scraped.redemptions is not None:
        states = GaugeMetricFamily(
            "loyalty_redemptions", "Redemptions now in each state, over all vendors.", labels=("state",)
        )
        for state, value in scraped.redemptions.items():
            states.add_metric([state], value)
        families.append(states)
    if scraped.card_mails is not None:
        mails = GaugeMetricFamily(
            "loyalty_card_mails", "Card mails now in each status, over all vendors.", labels=("status",)
        )
        for status, value in scraped.card_mails.items():
            mails.add_metric([status], value)
        families.append(mails)
    if scraped.pass_registrations is not None:
        registered = GaugeMetricFamily(
            "loyalty_pass_registrations",
            "Devices registered for passes, over all vendors, by where their pushes stand.",
            labels=("state",),
        )
        for state, value in scraped.pass_registrations.items():
            registered.add_metric([state], value)
        families.append(registered)
    if scraped.webhooks is not None:
        deliveries = GaugeMetricFamily(
            "loyalty_webhook_deliveries",
            "Webhook delivery attempts by outcome (succeeded, failed) and those waiting (pending), over the"
            " events kept.",
            labels=("status",),
        )
        for status, value in scraped.webhooks.by_status.items():
            deliveries.add_metric([status], value)
        age = GaugeMetricFamily(
            "loyalty_webhook_queue_age_seconds", "How long the longest-waiting due webhook delivery has waited."
        )
        age.add_metric([], scraped.webhooks.queue_age_seconds)
        families.extend((deliveries, age))
    queue_up = GaugeMetricFamily("loyalty_queue_up", "1 when this scrape could read the job queue.")
    queue_up.add_metric([], 1 if scraped.queue is not None else 0)
    families.append(queue_up)
    if scraped.queue is not None:
        jobs = GaugeMetricFamily("loyalty_queue_jobs", "Jobs in the queue, by state.", labels=("state",))
        for state in ("queued", "active", "scheduled"):
            jobs.add_metric([state], getattr(scraped.queue, state))
        failed = GaugeMetricFamily(
            "loyalty_queue_failed_jobs", "Jobs that failed in the workers running now, since each started."
        )
        failed.add_metric([], scraped.queue.failed)
        families.extend((jobs, failed))
    return families


class _ScrapeCollector(Collector):
    def __init__(self, scraped: Scraped) -> None:
        self._scraped = scraped

    def collect(self) -> list[Any]:
        return _families(self._scraped)


_WATCHED: Final[weakref.WeakSet[Any]] = weakref.WeakSet()


def watch_pool(pool: Any) -> None:
    """Count the connections a SQLAlchemy pool hands out and takes back, and its size; once per pool,
    however many apps share it."""
    if pool in _WATCHED:
        return
    _WATCHED.add(pool)
    POOL_SIZE.inc(pool.size())
    event.listen(pool, "checkout", lambda *_: POOL_IN_USE.inc())
    event.listen(pool, "checkin", lambda *_: POOL_IN_USE.dec())


def watch_driver_pool(pool: Any) -> None:
    """The psycopg pool's size, once per pool; its checkouts are counted by :data:`driver_checkout`."""
    if pool in _WATCHED:
        return
    _WATCHED.add(pool)
    POOL_SIZE.inc(pool.max_size)


driver_checkout: Final = POOL_IN_USE.inc
"""A connection taken from (+1) or given back to (-1) the psycopg pool: the gauge's own method, not a
function around it, since it runs twice on every request."""


def refused(window: str) -> None:
    REFUSALS.labels(window).inc()


def observe(scope: Any, status: int, seconds: float | None) -> None:
    route = str(scope.get("path_template") or UNMATCHED)
    method = str(scope.get("method", ""))
    key = (method, route, status)
    children = _children.get(key)
    if children is None:
        # labels() takes a lock and builds its key each time: once per series is enough
        if len(_children) >= MAX_SERIES_CACHED:
            _children.clear()
        children = _children[key] = (REQUESTS.labels(method, route, str(status)), LATENCY.labels(method, route))
    children[0].inc()
    if seconds is not None:
        children[1].observe(seconds)


MAX_SERIES_CACHED: Final = 10_000
_children: dict[tuple[str, str, int], tuple[Any, Any]] = {}


def exposition(scraped: Scraped) -> bytes:
    """The text format of every metric: the processes' own, summed over the server's processes when
    they share a multiprocess directory, then what this scrape read."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        MultiProcessCollector(registry)  # type: ignore[no-untyped-call]  # the library ships no annotation here
        processes = generate_latest(registry)
    else:
        processes = generate_latest(REGISTRY)
    now = CollectorRegistry(auto_describe=False)
    now.register(_ScrapeCollector(scraped))
    return processes + generate_latest(now)
