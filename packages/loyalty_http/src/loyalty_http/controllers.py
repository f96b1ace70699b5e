"""Every controller the service mounts, in one list: a new area adds its controllers here."""

from __future__ import annotations

from typing import Any

from loyalty_http.admin.tenancy import AdminTenancyController
from loyalty_http.health.controllers import HealthController
from loyalty_http.oauth.controllers import OAuthController, VersionedOAuthController

ROUTE_HANDLERS: list[Any] = [
    HealthController,
    OAuthController,
    VersionedOAuthController,
    AdminTenancyController,
]
