"""Which addresses a webhook may reach: globally routable only, IPv4 inside IPv6 forms judged by
the IPv4 address, loopback (and plain http) only in test mode."""

from __future__ import annotations

import ipaddress

import pytest

from loyalty_core.errors import ValidationFailed
from loyalty_core.events.rules.addresses import Resolver, carried, check_url, is_allowed


def _resolving_to(*found: str) -> Resolver:
    async def resolve(host: str, port: int) -> list[str]:
        return list(found)

    return resolve


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "240.0.0.1",
        "::1",
        "fe80::1",
        "fc00::1",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "2002:7f00:1::",
        "2002:a9fe:a9fe::",
        "64:ff9b::a00:1",
        "64:ff9b::7f00:1",
    ],
)
def test_non_public_addresses_are_refused(address: str) -> None:
    assert not is_allowed(ipaddress.ip_address(address), allow_loopback=False)


@pytest.mark.parametrize("address", ["8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"])
def test_public_addresses_are_allowed(address: str) -> None:
    assert is_allowed(ipaddress.ip_address(address), allow_loopback=False)


def test_wrapped_ipv4_is_unwrapped() -> None:
    assert carried(ipaddress.ip_address("2002:7f00:1::")) == ipaddress.ip_address("127.0.0.1")
    assert carried(ipaddress.ip_address("64:ff9b::a00:1")) == ipaddress.ip_address("10.0.0.1")


def test_test_mode_allows_loopback_but_nothing_else_private() -> None:
    assert is_allowed(ipaddress.ip_address("127.0.0.1"), allow_loopback=True)
    assert is_allowed(ipaddress.ip_address("::1"), allow_loopback=True)
    assert not is_allowed(ipaddress.ip_address("10.0.0.1"), allow_loopback=True)
    assert not is_allowed(ipaddress.ip_address("169.254.169.254"), allow_loopback=True)


async def test_a_name_resolving_to_any_private_address_is_refused() -> None:
    with pytest.raises(ValidationFailed) as refused:
        await check_url("https://hooks.example.com/x", _resolving_to("8.8.8.8", "10.0.0.5"), test_mode=False)
    assert refused.value.fields == {"url": ["The URL resolves to an address that is not publicly routable."]}


async def test_a_public_name_gives_its_checked_addresses() -> None:
    target = await check_url("https://hooks.example.com:8443/in?a=1", _resolving_to("8.8.8.8"), test_mode=False)
    assert (target.host, target.port, target.path, target.addresses) == (
        "hooks.example.com",
        8443,
        "/in?a=1",
        ("8.8.8.8",),
    )


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://hooks.example.com/", "The URL must start with https://."),
        ("ftp://hooks.example.com/", "The URL must start with https://."),
        ("https://user:pw@hooks.example.com/", "The URL must name a host and carry no credentials."),
        ("https://[::1]/", "The URL resolves to an address that is not publicly routable."),
        ("https://127.0.0.1/", "The URL resolves to an address that is not publicly routable."),
        ("https://169.254.169.254/latest", "The URL resolves to an address that is not publicly routable."),
    ],
)
async def test_urls_refused_outside_test_mode(url: str, reason: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        await check_url(url, _resolving_to("8.8.8.8"), test_mode=False)
    assert refused.value.fields == {"url": [reason]}


async def test_test_mode_accepts_http_on_loopback_only() -> None:
    target = await check_url("http://127.0.0.1:8080/hook", _resolving_to(), test_mode=True)
    assert target.addresses == ("127.0.0.1",)
    with pytest.raises(ValidationFailed):
        await check_url("http://10.0.0.1/hook", _resolving_to(), test_mode=True)


async def test_a_name_that_does_not_resolve_is_refused() -> None:
    async def fails(host: str, port: int) -> list[str]:
        raise OSError("no such name")

    with pytest.raises(ValidationFailed) as refused:
        await check_url("https://nowhere.example/", fails, test_mode=False)
    assert refused.value.fields == {"url": ["The URL's host name does not resolve."]}
