"""Typed client of the loyalty API: ``LoyaltyClient`` (blocking) and ``AsyncLoyaltyClient``
(asyncio), one method per operation of the public OpenAPI document, msgspec structs for every
request and answer (``loyalty_client.models``), one exception per error code
(``loyalty_client.error_codes``, all subclasses of ``LoyaltyError``, as is ``APIConnectionError`` for
a call that got no answer) and ``verify_webhook``."""

from __future__ import annotations

from loyalty_client import error_codes, models
from loyalty_client.client import AsyncLoyaltyClient, LoyaltyClient
from loyalty_client.errors import APIConnectionError, LoyaltyError
from loyalty_client.webhooks import verify_webhook

__version__ = "0.1.0"

__all__ = [
    "APIConnectionError",
    "AsyncLoyaltyClient",
    "LoyaltyClient",
    "LoyaltyError",
    "__version__",
    "error_codes",
    "models",
    "verify_webhook",
]
