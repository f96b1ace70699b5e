"""Updating a saved platform_b object through the platform's REST API (PASS-16): the deployment's
issuer account trades a signed assertion for an access token (kept until a minute before it ends),
then ``PATCH {api_url}/walletobjects/v1/loyaltyObject/{object id}`` with the object as the save
link carries it, showing what the pass shows now.

Both addresses are checked like a webhook's before every request and the request goes to the
address just checked (``pinned``), TLS verified against the URL's host; redirects are not followed.
"""

from __future__ import annotations

import ipaddress
import ssl
from datetime import datetime, timedelta
from urllib.parse import quote

import httpx
import structlog

from loyalty_api.adapters.pass_platforms import pass_card
from loyalty_core.errors import ValidationFailed
from loyalty_core.events.rules.addresses import Resolver, check_url
from loyalty_core.passes.services.ports import CardFacts, PushOutcome
from loyalty_wallet_pass.google import ASSERTION_GRANT, TOKEN_URL, SaveLinkIssuer, access_assertion, loyalty_object

log = structlog.get_logger("loyalty.passes.objects")

API_URL = "https://walletobjects.googleapis.com"
TIMEOUT_SECONDS = 10.0


class Refused(Exception):
    """The address failed the check, or the platform did not answer as it should."""


async def pinned(url: str, resolver: Resolver, *, test_mode: bool) -> tuple[str, dict[str, str], dict[str, str]]:
    """(the URL on the checked address, its Host header, the request's TLS server name)."""
    try:
        target = await check_url(url, resolver, test_mode=test_mode)
    except ValidationFailed as refused:
        raise Refused(refused.message) from None
    address = target.addresses[0].split("%", 1)[0]
    netloc = f"[{address}]:{target.port}" if ipaddress.ip_address(address).version == 6 else f"{address}:{target.port}"
    default_port = 443 if target.scheme == "https" else 80
    host = target.host if target.port == default_port else f"{target.host}:{target.port}"
    return f"{target.scheme}://{netloc}{target.path}", {"Host": host}, {"sni_hostname": target.host}


class ObjectUpdates:
    def __init__(
        self,
        issuer: SaveLinkIssuer,
        resolver: Resolver,
        *,
        api_url: str = API_URL,
        token_url: str = TOKEN_URL,
        test_mode: bool = False,
        verify: ssl.SSLContext | bool = True,
        timeout: float = TIMEOUT_SECONDS,
    ) -> None:
        self._issuer, self._resolver, self._test_mode = issuer, resolver, test_mode
        self._api_url, self._token_url = api_url.rstrip("/"), token_url
        self._client = httpx.AsyncClient(
            verify=verify, trust_env=False, follow_redirects=False, timeout=httpx.Timeout(timeout)
        )
        self._token: tuple[str, datetime] | None = None

    async def aclose(self) -> None:
        await self._client.aclose()

    def shown(self, card: CardFacts) -> dict[str, object]:
        """What the card's object shows now, built as the save link builds it."""
        return loyalty_object(pass_card(card), self._issuer)

    async def _access_token(self, now: datetime) -> str:
        if self._token is not None and self._token[1] > now:
            return self._token[0]
        url, host, extensions = await pinned(self._token_url, self._resolver, test_mode=self._test_mode)
        assertion = access_assertion(self._issuer, token_url=self._token_url, issued_at=now)
        response = await self._client.post(
            url, data={"grant_type": ASSERTION_GRANT, "assertion": assertion}, headers=host, extensions=extensions
        )
        if response.status_code != 200:
            raise Refused(f"the token endpoint answered {response.status_code}")
        body = response.json()
        token, lifetime = str(body["access_token"]), int(body.get("expires_in", 3600))
        self._token = (token, now + timedelta(seconds=max(0, lifetime - 60)))
        return token

    async def update(self, object_id: str, shown: dict[str, object], now: datetime) -> PushOutcome:
        """Send the object as ``shown`` (``loyalty_object`` of the pass card): ok, gone (404: the
        platform has no such object) or unavailable."""
        try:
            token = await self._access_token(now)
            url, host, extensions = await pinned(
                f"{self._api_url}/walletobjects/v1/loyaltyObject/{quote(object_id, safe='')}",
                self._resolver,
                test_mode=self._test_mode,
            )
            response = await self._client.patch(
                url, json=shown, headers={**host, "Authorization": f"Bearer {token}"}, extensions=extensions
            )
        except (Refused, httpx.HTTPError, ValueError, KeyError, OSError) as failed:
            log.warning("platform_b object update failed", error=type(failed).__name__)
            return PushOutcome.UNAVAILABLE
        if response.status_code == 200:
            return PushOutcome.OK
        if response.status_code == 404:
            return PushOutcome.GONE
        if response.status_code == 401:
            self._token = None
        return PushOutcome.UNAVAILABLE
