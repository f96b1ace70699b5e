"""Sending one webhook: the signature, and a POST that can only reach the address just checked.

The URL is checked again before every attempt (``loyalty_core.events.rules.addresses``) and the request
connects to the checked address itself, so a DNS answer that changed since registration cannot
send it into the service's own network. TLS is still verified against the URL's host name (it is
the SNI and the name the certificate must carry). Redirects are not followed, no proxy is taken
from the environment, the whole attempt is cut at 10 seconds and at most 64 KiB of the answer are
read (only its status counts).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import ipaddress
import ssl
import time
from collections.abc import Sequence
from datetime import datetime

import httpx

from loyalty_core.errors import ValidationFailed
from loyalty_core.events.jobs import Outcome
from loyalty_core.events.rules.addresses import Resolver, check_url

TIMEOUT_SECONDS = 10.0
MAX_ANSWER_BYTES = 65_536
USER_AGENT = "loyalty-webhooks/1"


def signature(body: bytes, secrets: Sequence[str], at: datetime) -> str:
    """``t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">``, one ``v1`` per valid secret."""
    t = str(int(at.timestamp()))
    signed = t.encode() + b"." + body
    marks = [f"v1={hmac.new(s.encode(), signed, hashlib.sha256).hexdigest()}" for s in secrets]
    return ",".join([f"t={t}", *marks])


def _netloc(address: str, port: int) -> str:
    return f"[{address}]:{port}" if ipaddress.ip_address(address).version == 6 else f"{address}:{port}"


class Sender:
    """Posts webhooks; one HTTP client (and its connection pool, keyed by address) per worker."""

    def __init__(
        self,
        resolver: Resolver,
        *,
        test_mode: bool,
        timeout: float = TIMEOUT_SECONDS,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        """``verify``: the TLS trust (the system's by default; tests pass a context trusting their own CA)."""
        self._resolver, self._test_mode, self._timeout = resolver, test_mode, timeout
        self._client = httpx.AsyncClient(
            verify=verify,
            trust_env=False,
            follow_redirects=False,
            timeout=httpx.Timeout(timeout),
            headers={"User-Agent": USER_AGENT},
            # a kept connection was verified for one host name; another endpoint on the same address
            # must not reuse it
            limits=httpx.Limits(max_keepalive_connections=0),
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Outcome:
        started = time.monotonic()

        def took() -> int:
            return int((time.monotonic() - started) * 1000)

        try:
            target = await check_url(url, self._resolver, test_mode=self._test_mode)
        except ValidationFailed as refused:
            return Outcome(False, None, took(), "; ".join(refused.fields.get("url", [refused.message])))
        address = target.addresses[0].split("%", 1)[0]
        default_port = 443 if target.scheme == "https" else 80
        host = target.host if target.port == default_port else f"{target.host}:{target.port}"
        if ":" in target.host and target.port == default_port:
            host = f"[{target.host}]"
        pinned = f"{target.scheme}://{_netloc(address, target.port)}{target.path}"
        try:
            async with asyncio.timeout(self._timeout):
                request = self._client.build_request(
                    "POST",
                    pinned,
                    content=body,
                    headers={**headers, "Host": host},
                    extensions={"sni_hostname": target.host},
                )
                response = await self._client.send(request, stream=True)
                try:
                    read = 0
                    async for chunk in response.aiter_raw():
                        read += len(chunk)
                        if read >= MAX_ANSWER_BYTES:
                            break
                finally:
                    await response.aclose()
        except TimeoutError:
            return Outcome(False, None, took(), f"No answer within {self._timeout:g} seconds.")
        except httpx.HTTPError as failed:
            return Outcome(False, None, took(), f"{type(failed).__name__}: {failed}"[:500])
        status = response.status_code
        if 200 <= status < 300:
            return Outcome(True, status, took(), None)
        return Outcome(False, status, took(), f"The receiver answered {status}.")
