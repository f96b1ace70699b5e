"""Telling platform_a's push service that a pass changed (PASS-14): an empty JSON push over HTTP/2 to
``{push_url}/3/device/{push token}``, with ``apns-topic`` the pass type identifier and
``apns-push-type: background``, over a TLS connection that presents the shop's own pass identity.

One HTTP/2 client per identity keeps its connection, so a run's pushes for a shop share it. The
push service's URL is checked like a webhook's before every push (``loyalty_core.events.rules
.addresses``: only publicly routable addresses, loopback only in test mode) and the request goes
to the address just checked, TLS verified against the URL's host. platform_b's objects are
updated through ``pass_objects.ObjectUpdates`` when it is given.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import ssl
import tempfile
from collections.abc import Awaitable, Callable
from datetime import datetime

import httpx
import structlog

from loyalty_api.adapters.pass_objects import ObjectUpdates
from loyalty_core.errors import ValidationFailed
from loyalty_core.events.rules.addresses import Resolver, check_url
from loyalty_core.passes.services.ports import CardFacts, PushOutcome, WalletPushes
from loyalty_wallet_pass.identity import SigningIdentity

log = structlog.get_logger("loyalty.passes.pushes")

PUSH_URL = "https://api.push.apple.com"
TIMEOUT_SECONDS = 10.0
GONE = {410}
"""The device is no more (``Unregistered``): its registration goes."""
BAD_TOKEN = "BadDeviceToken"

IdentityOf = Callable[[int], Awaitable[SigningIdentity]]
"""The shop's pass identity by vendor id (the service's ``WalletPasses.identity`` over a session)."""


def client_context(identity: SigningIdentity, verify: ssl.SSLContext | None) -> ssl.SSLContext:
    """A TLS context presenting the identity (certificate, intermediate, key). The ssl module reads
    a chain only from files: they are written to a private temporary folder and removed at once."""
    context = verify if verify is not None else ssl.create_default_context()
    context.set_alpn_protocols(["h2"])
    with tempfile.TemporaryDirectory() as folder:
        chain, key = os.path.join(folder, "chain.pem"), os.path.join(folder, "key.pem")
        for path, data in (
            (chain, identity.certificate_pem() + identity.intermediate_pem()),
            (key, identity.private_key_pem()),
        ):
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "wb") as file:
                file.write(data)
        context.load_cert_chain(chain, key)
    return context


class PlatformPushes(WalletPushes):
    def __init__(
        self,
        identity_of: IdentityOf,
        resolver: Resolver,
        *,
        push_url: str = PUSH_URL,
        test_mode: bool = False,
        verify: Callable[[], ssl.SSLContext] | None = None,
        timeout: float = TIMEOUT_SECONDS,
        objects: ObjectUpdates | None = None,
    ) -> None:
        """``verify``: a fresh context trusting the push service (the system's trust by default;
        tests give one trusting their own CA)."""
        self._identity_of, self._resolver, self._push_url = identity_of, resolver, push_url.rstrip("/")
        self._test_mode, self._verify, self._timeout = test_mode, verify, timeout
        self._clients: dict[bytes, httpx.AsyncClient] = {}
        self._objects = objects

    async def aclose(self) -> None:
        if self._objects is not None:
            await self._objects.aclose()
        for client in self._clients.values():
            with contextlib.suppress(Exception):
                await client.aclose()
        self._clients.clear()

    def _client(self, identity: SigningIdentity) -> httpx.AsyncClient:
        key = identity.certificate_pem()
        client = self._clients.get(key)
        if client is None:
            context = client_context(identity, self._verify() if self._verify is not None else None)
            client = httpx.AsyncClient(
                http2=True,
                verify=context,
                trust_env=False,
                follow_redirects=False,
                timeout=httpx.Timeout(self._timeout),
            )
            self._clients[key] = client
        return client

    async def push(
        self, vendor_id: int, pass_type_identifier: str, push_token: str, serial: str, now: datetime
    ) -> PushOutcome:
        try:
            target = await check_url(self._push_url, self._resolver, test_mode=self._test_mode)
        except ValidationFailed as refused:
            log.warning("push service address refused", reason=refused.message)
            return PushOutcome.UNAVAILABLE
        try:
            identity = await self._identity_of(vendor_id)
        except Exception as missing:  # no identity (yet): nothing can be pushed for the shop
            log.warning("no pass identity to push with", vendor_id=vendor_id, error=type(missing).__name__)
            return PushOutcome.UNAVAILABLE
        address = target.addresses[0].split("%", 1)[0]
        netloc = (
            f"[{address}]:{target.port}" if ipaddress.ip_address(address).version == 6 else f"{address}:{target.port}"
        )
        authority = target.host if target.port == 443 else f"{target.host}:{target.port}"
        try:
            response = await self._client(identity).post(
                f"{target.scheme}://{netloc}/3/device/{push_token}",
                content=b"{}",
                headers={
                    "Host": authority,
                    "apns-topic": pass_type_identifier,
                    "apns-push-type": "background",
                    "content-type": "application/json",
                },
                extensions={"sni_hostname": target.host},
            )
        except (httpx.HTTPError, ssl.SSLError, OSError) as failed:
            log.warning("push failed", vendor_id=vendor_id, error=type(failed).__name__)
            return PushOutcome.UNAVAILABLE
        if response.status_code == 200:
            return PushOutcome.OK
        if response.status_code in GONE or (response.status_code == 400 and BAD_TOKEN in response.text):
            return PushOutcome.GONE
        return PushOutcome.UNAVAILABLE

    async def update_object(self, object_id: str, card: CardFacts, now: datetime) -> PushOutcome:
        if self._objects is None:
            return PushOutcome.UNAVAILABLE
        return await self._objects.update(object_id, self._objects.shown(card), now)
