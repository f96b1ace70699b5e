"""Liveness and readiness (OPS-1): bare JSON, no envelope."""

from __future__ import annotations

from typing import Any

import psycopg
from litestar import Controller, Request, Response, get
from sqlalchemy.exc import SQLAlchemyError

from loyalty_core.events.reads import webhook_totals
from loyalty_core.passes.reads import card_mails_by_status, pass_registrations_by_state
from loyalty_core.redemptions.reads import redemptions_by_state
from loyalty_core.wallet.reads import points_by_kind
from loyalty_http.access.connection import request_connection
from loyalty_http.params import Config
from loyalty_http.route_options import reads
from loyalty_http.wire import metrics

SCRAPE_WAIT_SECONDS = 2.0
"""How long a scrape waits for a database connection before it answers without the database's
figures."""


class HealthController(Controller):
    path = "/health"

    @get("/live", opt=reads(auth="none"))
    async def live(self) -> dict[str, str]:
        return {"status": "ok"}

    @get("/ready", opt=reads(auth="none", success=(503,)))
    async def ready(self, config: Config) -> Response[dict[str, Any]]:
        report = await config.readiness()
        status = 200 if report.database_ok else 503
        body = {"status": report.status, "checks": report.checks}
        headers = {"Retry-After": "5"} if status == 503 else None
        return Response(body, status_code=status, headers=headers)


class MetricsController(Controller):
    path = "/metrics"

    @get("/", opt=reads(auth="admin"), media_type=metrics.CONTENT_TYPE)
    async def metrics(self, config: Config, request: Request[Any, Any, Any]) -> bytes:
        """Prometheus text (admin token; not rate-limited): requests and their durations by route
        template and status, rate-limit refusals, pool use; points by kind, redemptions by state,
        card mails by status, pass registrations by state, webhook deliveries by outcome and the age
        of the oldest due one, and the job queue, read at the scrape. docs/deployment.md lists the
        names."""
        points = redemptions = card_mails = webhooks = registrations = None
        try:
            # a database away must not hold the scrape for the pool's whole timeout: Prometheus
            # gives up on a scrape after 10 s by default, and loyalty_database_up 0 is the answer
            conn = await request_connection(request.scope).reader(wait=SCRAPE_WAIT_SECONDS)
            points = await points_by_kind(conn)
            redemptions = await redemptions_by_state(conn, config.clock.now())
            card_mails = await card_mails_by_status(conn)
            webhooks = await webhook_totals(conn, config.clock.now())
            registrations = await pass_registrations_by_state(conn)
        except (OSError, TimeoutError, psycopg.Error, SQLAlchemyError):
            pass  # the scrape still answers: loyalty_database_up is 0
        queue = await config.queue_stats() if config.queue_stats is not None else None
        return metrics.exposition(metrics.Scraped(points, redemptions, queue, card_mails, webhooks, registrations))
