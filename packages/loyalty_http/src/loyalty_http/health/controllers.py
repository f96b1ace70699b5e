"""Liveness and readiness (back-office contract, section 5 "Operability"): bare JSON, no envelope."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Response, get

from loyalty_http.params import Config
from loyalty_http.route_options import reads
from loyalty_http.wire import metrics


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
    async def metrics(self) -> bytes:
        """Prometheus text: requests and their durations by route template and status (admin token;
        not rate-limited)."""
        return metrics.exposition()
