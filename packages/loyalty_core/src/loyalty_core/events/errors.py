"""Errors of the events area, each named for its code."""

from __future__ import annotations

from loyalty_core.errors import NotFound


class EventNotFound(NotFound):
    code = "EVENT_NOT_FOUND"


class WebhookEndpointNotFound(NotFound):
    code = "WEBHOOK_ENDPOINT_NOT_FOUND"
