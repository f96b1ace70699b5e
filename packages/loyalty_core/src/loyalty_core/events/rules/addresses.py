"""Where a webhook may go: ``https`` only, to a host whose every address is globally routable.

A URL is checked when it is registered and again before each delivery, and the delivery connects to
the address checked here (no second lookup), so a DNS answer that changes between the two cannot
turn a webhook against the service's own network. IPv4 addresses wrapped in IPv6 forms (mapped,
6to4, NAT64) are judged by the IPv4 address they carry. In test mode ``http`` and loopback addresses
are allowed, so tests can run receivers; nothing else is relaxed.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from loyalty_core.errors import ValidationFailed

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""(host, port) -> the addresses the name resolves to, as text."""

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))


async def system_resolver(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return sorted({str(info[4][0]) for info in infos})


def carried(address: IpAddress) -> IpAddress:
    """The IPv4 address an IPv6 form carries (IPv4-mapped, 6to4, NAT64), else the address itself."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address.sixtofour is not None:
            return address.sixtofour
        if any(address in network for network in _NAT64):
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


def is_allowed(address: IpAddress, *, allow_loopback: bool) -> bool:
    inner = carried(address)
    if allow_loopback and inner.is_loopback:
        return True
    return inner.is_global and not (inner.is_multicast or inner.is_reserved or inner.is_unspecified)


@dataclass(frozen=True, slots=True)
class Target:
    """A checked URL: where to connect (``addresses``) and what to verify TLS against (``host``)."""

    scheme: str
    host: str
    port: int
    path: str
    addresses: tuple[str, ...]


def _refuse(reason: str) -> ValidationFailed:
    return ValidationFailed("The webhook URL is not allowed.", {"url": [reason]})


def parse_url(url: str, *, test_mode: bool) -> tuple[str, str, int, str]:
    """(scheme, host, port, path with query) or ``ValidationFailed`` on ``url``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        raise _refuse("The URL is not valid.") from None
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        # urlsplit reads ":0" as port 0 (it refuses only what is no number or passes 65535), which
        # the default below would have turned into 443: another port than the one registered
        raise _refuse("The URL's port must be a number from 1 to 65535.")
    schemes = ("https", "http") if test_mode else ("https",)
    if parts.scheme not in schemes:
        raise _refuse("The URL must start with https://.")
    if not parts.hostname or parts.username is not None or parts.password is not None:
        raise _refuse("The URL must name a host and carry no credentials.")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80), path


async def check_url(url: str, resolver: Resolver, *, test_mode: bool) -> Target:
    """The URL's target when every address it resolves to may be reached; ``ValidationFailed`` on ``url``."""
    scheme, host, port, path = parse_url(url, test_mode=test_mode)
    try:
        literal: IpAddress | None = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        found = [str(literal)]
    else:
        try:
            found = await resolver(host, port)
        except (OSError, UnicodeError):
            raise _refuse("The URL's host name does not resolve.") from None
    if not found:
        raise _refuse("The URL's host name does not resolve.")
    for text in found:
        try:
            address = ipaddress.ip_address(text.split("%", 1)[0])
        except ValueError:
            raise _refuse("The URL's host name resolves to an address that is not valid.") from None
        if not is_allowed(address, allow_loopback=test_mode):
            raise _refuse("The URL resolves to an address that is not publicly routable.")
    return Target(scheme, host, port, path, tuple(found))
