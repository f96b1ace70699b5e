"""Where routes live (INPUT-12, AUTH-9): vendor routes under ``/api/v1``,
the admin API under ``/admin/v1`` behind the admin token; checked over every registered route."""

from __future__ import annotations

from litestar import Litestar

from tests.support.routes import endpoints

UNVERSIONED = {"/oauth/token", "/health/live", "/health/ready", "/metrics", "/unsubscribe/{token}"}
"""AUTH-1 (the token endpoint also answers under /api/v1), health probes, the metrics (OPS-2),
the mail's unsubscribe link."""


def _service_routes(app: Litestar) -> list[tuple[str, str | None]]:
    """Every route but the test-only probe and the framework's OpenAPI pages."""
    return [(e.path, e.auth) for e in endpoints(app) if not e.path.startswith(("/api/v1/probe/", "/schema"))]


def test_vendor_routes_are_versioned(app: Litestar) -> None:
    """INPUT-12: the public API answers under /api/v1."""
    misplaced = {path for path, auth in _service_routes(app) if auth == "vendor" and not path.startswith("/api/v1/")}
    assert misplaced == set()


def test_admin_routes_are_under_admin_v1_and_take_the_admin_token(app: Litestar) -> None:
    """AUTH-9: prefix /admin/v1, header Authorization: Bearer <LOYALTY_ADMIN_TOKEN>."""
    routes = _service_routes(app)
    # the admin docs page is an HTML shell that asks for the token and fetches the document with it
    assert {path for path, auth in routes if path.startswith("/admin/") and auth != "admin"} == {"/admin/v1/docs"}
    # OPS-2: GET /metrics takes the admin token outside /admin/v1
    assert {path for path, auth in routes if auth == "admin" and not path.startswith("/admin/v1/")} == {"/metrics"}


PASS_WEB_SERVICE = "/passes/platform_a/v1/"
"""PASS-11: platform_a's pass web service carries the version of the platform's protocol."""


def test_only_known_routes_are_unversioned(app: Litestar) -> None:
    """Versioning: everything else carries its version in the path (PASS-11: the pass web service
    the version of the platform's protocol)."""
    unversioned = {
        path for path, _ in _service_routes(app) if not path.startswith(("/api/v1/", "/admin/v1/", PASS_WEB_SERVICE))
    }
    assert unversioned == UNVERSIONED


def test_every_public_route_counts_in_the_rate_limiter(app: Litestar) -> None:
    """RATE-1 to RATE-5: every vendor request counts in a window. Three redemption and voucher
    routes had no route options at all, so the pipeline did not limit them and the sweeps skipped
    them. (The docs page's static assets are left out here.)"""
    from litestar.routes import HTTPRoute

    unlimited = [
        f"{sorted(h.http_methods)} {route.path}"
        for route in app.routes
        if isinstance(route, HTTPRoute) and route.path.startswith("/api/v1/")
        for h in route.route_handlers
        if h.http_methods != {"OPTIONS"}
        and h.opt.get("auth", "vendor") == "vendor"
        and h.opt.get("limit") is None
        and not route.path.startswith("/api/v1/docs")
    ]
    assert unlimited == []
