"""platform_a's push, sent by the service's sender to a real HTTP/2 server over TLS (PASS-19): the
request's method, path, headers and body as the platform documents them, the shop's pass identity
presented as the client certificate, one connection per identity, and the answers read as ok, gone
or unavailable. The push service's address is checked like a webhook's."""

from __future__ import annotations

from datetime import UTC, datetime

from loyalty_api.adapters.pass_pushes import PlatformPushes
from loyalty_core.passes.services.ports import PushOutcome
from loyalty_wallet_pass.authority import CertificateAuthority
from loyalty_wallet_pass.identity import SigningIdentity
from tests.support.h2_receiver import h2_receiver

HOST = "push.test"
PASS_TYPE = "pass.test.loyalty.vendor-1"
NOW = datetime(2026, 12, 1, tzinfo=UTC)
AUTHORITY = CertificateAuthority.create()
IDENTITY = AUTHORITY.issue(PASS_TYPE)


async def _loopback(host: str, port: int) -> list[str]:
    return ["127.0.0.1"]


async def _private(host: str, port: int) -> list[str]:
    return ["10.1.2.3"]


async def _identity(vendor_id: int) -> SigningIdentity:
    return IDENTITY


async def test_a_push_is_an_http2_post_with_the_platform_headers_and_the_shop_identity() -> None:
    """PASS-19: POST /3/device/<push token> over HTTP/2, apns-topic the pass type identifier,
    apns-push-type background, body {}, the shop's certificate presented; one connection reused."""
    async with h2_receiver(HOST, AUTHORITY.root_pem()) as receiver:
        pushes = PlatformPushes(
            _identity, _loopback, push_url=f"https://{HOST}:{receiver.port}", test_mode=True, verify=receiver.trusting
        )
        try:
            assert await pushes.push(1, PASS_TYPE, "token-1", "v1-c1", NOW) == PushOutcome.OK
            assert await pushes.push(1, PASS_TYPE, "token-2", "v1-c2", NOW) == PushOutcome.OK
        finally:
            await pushes.aclose()
    first, second = receiver.received
    assert {k: v for k, v in first.headers.items() if k in (":method", ":path", ":authority", ":scheme")} == {
        ":method": "POST",
        ":path": "/3/device/token-1",
        ":authority": f"{HOST}:{receiver.port}",
        ":scheme": "https",
    }
    assert first.headers["apns-topic"] == PASS_TYPE
    assert first.headers["apns-push-type"] == "background"
    assert first.body == b"{}"
    assert f"userId={PASS_TYPE}" in first.client_subject
    assert second.headers[":path"] == "/3/device/token-2"
    assert receiver.connections == 1


async def test_the_platform_answers_are_read_as_ok_gone_or_unavailable() -> None:
    """PASS-15, PASS-19: 410 and 400 BadDeviceToken are gone; any other failure is unavailable."""
    async with h2_receiver(HOST, AUTHORITY.root_pem()) as receiver:
        receiver.statuses = [
            (410, b'{"reason":"Unregistered"}'),
            (400, b'{"reason":"BadDeviceToken"}'),
            (500, b'{"reason":"InternalServerError"}'),
            (429, b'{"reason":"TooManyRequests"}'),
        ]
        pushes = PlatformPushes(
            _identity, _loopback, push_url=f"https://{HOST}:{receiver.port}", test_mode=True, verify=receiver.trusting
        )
        try:
            outcomes = [await pushes.push(1, PASS_TYPE, f"t{n}", "v1-c1", NOW) for n in range(4)]
        finally:
            await pushes.aclose()
    assert outcomes == [PushOutcome.GONE, PushOutcome.GONE, PushOutcome.UNAVAILABLE, PushOutcome.UNAVAILABLE]


async def test_a_push_service_address_that_is_not_public_is_never_reached() -> None:
    """PASS-19: the push service's URL passes the webhooks' address check before every push."""
    async with h2_receiver(HOST, AUTHORITY.root_pem()) as receiver:
        pushes = PlatformPushes(
            _identity, _private, push_url=f"https://{HOST}:{receiver.port}", verify=receiver.trusting
        )
        try:
            assert await pushes.push(1, PASS_TYPE, "token", "v1-c1", NOW) == PushOutcome.UNAVAILABLE
        finally:
            await pushes.aclose()
    assert receiver.received == []
