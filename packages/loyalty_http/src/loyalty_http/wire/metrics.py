"""Prometheus metrics of the request path: how many requests each route answered, with which
status, and how long they took (contract 5: ``GET /metrics``, admin token, Prometheus text).

Routes are labelled by their template (``/api/v1/customers/{customer}/wallet``), never by the path
a client sent, so the number of series stays bounded whatever is requested; a path that matched no
route is labelled ``unmatched``. With several server processes, set ``PROMETHEUS_MULTIPROC_DIR``
to a directory they share and each scrape answers the sum over all of them.
"""

from __future__ import annotations

import os
from typing import Any, Final

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

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


def observe(scope: Any, status: int, seconds: float | None) -> None:
    route = str(scope.get("path_template") or UNMATCHED)
    method = str(scope.get("method", ""))
    REQUESTS.labels(method, route, str(status)).inc()
    if seconds is not None:
        LATENCY.labels(method, route).observe(seconds)


def exposition() -> bytes:
    """The text format of every metric, summed over the server's processes when they share a
    multiprocess directory."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        MultiProcessCollector(registry)  # type: ignore[no-untyped-call]  # the library ships no annotation here
        return generate_latest(registry)
    return generate_latest(REGISTRY)
