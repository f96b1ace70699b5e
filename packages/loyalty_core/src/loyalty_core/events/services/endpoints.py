"""A shop's webhook endpoints: register, read, change, delete, rotate the secret, send a test ping.

The secret (``whsec_`` and 32 letters and digits) is shown only when made and stored only sealed by
the service's :class:`Sealer`, so a copy of the database alone does not let anyone sign as the
service. A rotation keeps the secret it retires signing for a day from then, so receivers can switch
over; a second rotation within that day retires another, and both keep signing, each for its own day
(EVENT-15).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar, Protocol

import msgspec
from sqlalchemy import delete, func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.errors import ValidationFailed
from loyalty_core.events import errors as e
from loyalty_core.events.models import PING, DeliveryStatus, WebhookDelivery, WebhookEndpoint, events
from loyalty_core.events.rules.addresses import Resolver, check_url
from loyalty_core.events.services.recording import RECORDED, new_event_id
from loyalty_core.random_text import ALNUM, random_text
from loyalty_core.tenancy.services.ceilings import lock_vendor

MAX_ENDPOINTS = 10
SECRET_PREFIX = "whsec_"
ROTATION_OVERLAP = timedelta(hours=24)


class Ping(msgspec.Struct):
    """The test event's payload: which endpoint it was sent to."""

    event_type: ClassVar[str] = PING
    version: ClassVar[int] = 1
    endpoint_id: int
    url: str


class Sealer(Protocol):
    """Seals secrets at rest with the service's encryption key; ``context`` binds a sealed value to
    its owner, so it does not open when copied onto another shop's row."""

    def seal(self, plaintext: bytes, context: bytes) -> bytes: ...

    def open(self, sealed: bytes, context: bytes) -> bytes: ...


def sealing_context(vendor_id: int) -> bytes:
    return f"webhook-endpoint:vendor:{vendor_id}".encode()


def new_secret() -> str:
    return SECRET_PREFIX + random_text(ALNUM, 32)


def retired_secrets(endpoint: WebhookEndpoint, now: datetime) -> list[tuple[bytes, datetime]]:
    """The sealed secrets rotations retired that still sign at ``now``, each with the end of its day,
    the one retired last first."""
    retired = list(zip(endpoint.earlier_sealed_secrets, endpoint.earlier_secrets_until, strict=True))
    if endpoint.previous_sealed_secret is not None and endpoint.previous_secret_until is not None:
        retired.append((endpoint.previous_sealed_secret, endpoint.previous_secret_until))
    return [(sealed, until) for sealed, until in reversed(retired) if now < until]


def signing_secrets(endpoint: WebhookEndpoint, sealer: Sealer, now: datetime) -> list[str]:
    """The secrets that sign a delivery now: the current one, then each retired one within its day."""
    context = sealing_context(endpoint.vendor_id)
    sealed = [endpoint.sealed_secret, *(s for s, _ in retired_secrets(endpoint, now))]
    return [sealer.open(one, context).decode() for one in sealed]


@dataclass(frozen=True, slots=True)
class WithSecret:
    endpoint: WebhookEndpoint
    secret: str


class WebhookEndpoints:
    def __init__(self, session: AsyncSession, clock: Clock, sealer: Sealer, resolver: Resolver, *, test_mode: bool):
        self._session, self._clock, self._sealer = session, clock, sealer
        self._resolver, self._test_mode = resolver, test_mode

    async def create(
        self, vendor_id: int, *, url: str, events: Sequence[str], description: str | None, enabled: bool
    ) -> WithSecret:
        await check_url(url, self._resolver, test_mode=self._test_mode)
        await lock_vendor(self._session, vendor_id)  # the count and the insert meet the ceiling one by one
        held = await self._session.scalar(
            select(func.count()).select_from(WebhookEndpoint).where(WebhookEndpoint.vendor_id == vendor_id)
        )
        if (held or 0) >= MAX_ENDPOINTS:
            raise ValidationFailed(
                "The shop has the most webhook endpoints it may have.",
                {"url": [f"A shop may have at most {MAX_ENDPOINTS} webhook endpoints; delete one first."]},
            )
        secret = new_secret()
        now = self._clock.now()
        endpoint = WebhookEndpoint(
            vendor_id=vendor_id,
            url=url,
            events=list(dict.fromkeys(events)),
            description=description,
            enabled=enabled,
            sealed_secret=self._sealer.seal(secret.encode(), sealing_context(vendor_id)),
            created_at=now,
            updated_at=now,
        )
        self._session.add(endpoint)
        await self._session.flush()
        return WithSecret(endpoint, secret)

    async def get(self, vendor_id: int, endpoint_id: int, *, lock: bool = False) -> WebhookEndpoint:
        statement = select(WebhookEndpoint).where(
            WebhookEndpoint.vendor_id == vendor_id, WebhookEndpoint.id == endpoint_id
        )
        found = await self._session.scalar(statement.with_for_update() if lock else statement)
        if found is None:
            raise e.WebhookEndpointNotFound("No webhook endpoint of the shop has this id.", id=endpoint_id)
        return found

    async def page(self, vendor_id: int, *, page: int, per_page: int) -> tuple[list[WebhookEndpoint], int]:
        mine = WebhookEndpoint.vendor_id == vendor_id
        total = await self._session.scalar(select(func.count()).select_from(WebhookEndpoint).where(mine))
        rows = await self._session.scalars(
            select(WebhookEndpoint)
            .where(mine)
            .order_by(WebhookEndpoint.id)
            .offset((page - 1) * per_page)
            .limit(per_page)
        )
        return list(rows), total or 0

    async def update(self, vendor_id: int, endpoint_id: int, changes: Mapping[str, Any]) -> WebhookEndpoint:
        endpoint = await self.get(vendor_id, endpoint_id, lock=True)
        if "url" in changes:
            await check_url(changes["url"], self._resolver, test_mode=self._test_mode)
            endpoint.url = changes["url"]
        if "events" in changes:
            endpoint.events = list(dict.fromkeys(changes["events"]))
        if "description" in changes:
            endpoint.description = changes["description"]
        if "enabled" in changes:
            endpoint.enabled = bool(changes["enabled"])
            if endpoint.enabled:  # turned back on: the failure count starts again
                endpoint.disabled_reason = None
                endpoint.failing_since = None
        endpoint.updated_at = self._clock.now()
        await self._session.flush()
        return endpoint

    async def delete(self, vendor_id: int, endpoint_id: int) -> None:
        endpoint = await self.get(vendor_id, endpoint_id, lock=True)
        await self._session.execute(
            delete(WebhookEndpoint).where(WebhookEndpoint.vendor_id == vendor_id, WebhookEndpoint.id == endpoint.id)
        )

    async def rotate_secret(self, vendor_id: int, endpoint_id: int) -> WithSecret:
        endpoint = await self.get(vendor_id, endpoint_id, lock=True)
        now = self._clock.now()
        secret = new_secret()
        # the secrets retired before keep their own day; those whose day is over are dropped here
        earlier = list(reversed(retired_secrets(endpoint, now)))
        endpoint.earlier_sealed_secrets = [sealed for sealed, _ in earlier]
        endpoint.earlier_secrets_until = [until for _, until in earlier]
        endpoint.previous_sealed_secret = endpoint.sealed_secret
        endpoint.previous_secret_until = now + ROTATION_OVERLAP
        endpoint.sealed_secret = self._sealer.seal(secret.encode(), sealing_context(vendor_id))
        endpoint.updated_at = now
        await self._session.flush()
        return WithSecret(endpoint, secret)

    async def ping(self, vendor_id: int, endpoint_id: int) -> str:
        """A ``ping`` event delivered to this endpoint only, whatever it listens to; its event id."""
        endpoint = await self.get(vendor_id, endpoint_id)
        if not endpoint.enabled:
            raise ValidationFailed(
                "The webhook endpoint is disabled.", {"enabled": ["Enable the endpoint before sending it a test."]}
            )
        now = self._clock.now()
        event_id = new_event_id(now)
        ping = Ping(endpoint_id=endpoint.id, url=endpoint.url)
        await self._session.execute(
            insert(events).values(
                vendor_id=vendor_id,
                id=event_id,
                type=Ping.event_type,
                payload_version=Ping.version,
                created_at=now,
                data=msgspec.to_builtins(ping),
            )
        )
        self._session.add(
            WebhookDelivery(
                vendor_id=vendor_id,
                endpoint_id=endpoint.id,
                event_id=event_id,
                attempt=1,
                status=DeliveryStatus.PENDING,
                next_attempt_at=now,
                created_at=now,
                updated_at=now,
            )
        )
        await self._session.flush()
        self._session.info[RECORDED] = True
        return event_id

    async def deliveries(
        self, vendor_id: int, endpoint_id: int, *, page: int, per_page: int
    ) -> tuple[list[WebhookDelivery], int]:
        """The endpoint's delivery log, newest first."""
        endpoint = await self.get(vendor_id, endpoint_id)
        mine = (WebhookDelivery.vendor_id == vendor_id, WebhookDelivery.endpoint_id == endpoint.id)
        total = await self._session.scalar(select(func.count()).select_from(WebhookDelivery).where(*mine))
        rows = await self._session.scalars(
            select(WebhookDelivery)
            .where(*mine)
            .order_by(WebhookDelivery.id.desc())
            .offset((page - 1) * per_page)
            .limit(per_page)
        )
        return list(rows), total or 0
