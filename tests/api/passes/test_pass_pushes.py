"""platform_a's push, sent by the service's sender to a real HTTP/2 server over TLS (PASS-19): the
request's method, path, headers and body as the platform documents them, the shop's pass identity
presented as the client certificate, one connection per identity, and the answers read as ok, gone
or unavailable. The push service's address is checked like a webhook's."""

from __future__ import annotations

from datetime import UTC, datetime

import jwt

from loyalty_api.adapters.pass_objects import ObjectUpdates
from loyalty_api.adapters.pass_pushes import PlatformPushes
from loyalty_api.adapters.wallet_pushes import PushStandIn
from loyalty_api.jobs.context import JobContext
from loyalty_api.settings import Settings
from loyalty_api.worker import make_queue, make_worker
from loyalty_core.clock import SystemClock
from loyalty_core.db import make_engine, make_sessionmaker
from loyalty_core.passes.services.ports import BrandingFacts, CardFacts, PushOutcome
from loyalty_wallet_pass.authority import CertificateAuthority
from loyalty_wallet_pass.google import SaveLinkIssuer
from loyalty_wallet_pass.identity import SigningIdentity, new_rsa_key, private_key_pem
from tests.support.h2_receiver import h2_receiver
from tests.support.object_api import object_api

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


async def test_a_platform_b_object_is_patched_with_the_issuer_account_token() -> None:
    """PASS-16: the issuer account trades a signed assertion for a token once, then each update is a
    PATCH of the object with what the pass shows now; 404 is gone, any other failure unavailable."""
    key = new_rsa_key()
    issuer = SaveLinkIssuer.from_pem("3388000000022000000", "wallet@loyalty.test", private_key_pem(key))
    card = CardFacts(
        3, 7, "CARD0001", "Ann", 42, "en", BrandingFacts("Shop", "#ffffff", "#000000", "#333333", None, None)
    )
    with object_api(HOST) as api:
        api.statuses = [200, 404, 503]
        base = f"https://{HOST}:{api.port}"
        updates = ObjectUpdates(
            issuer, _loopback, api_url=base, token_url=f"{base}/token", test_mode=True, verify=api.trusting
        )
        try:
            outcomes = [await updates.update("3388000000022000000.v3-c7", updates.shown(card), NOW) for _ in range(3)]
        finally:
            await updates.aclose()
    assert outcomes == [PushOutcome.OK, PushOutcome.GONE, PushOutcome.UNAVAILABLE]
    token, *patches = api.requests
    assert (token[0], token[1]) == ("POST", "/token")
    assert token[3]["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    claims = jwt.decode(
        token[3]["assertion"],
        key.public_key(),
        algorithms=["RS256"],
        audience=f"{base}/token",
        options={"verify_iat": False, "verify_exp": False},
    )
    assert claims["iss"] == "wallet@loyalty.test"
    assert [(m, p) for m, p, _, _ in patches] == [
        ("PATCH", "/walletobjects/v1/loyaltyObject/3388000000022000000.v3-c7")
    ] * 3
    assert patches[0][2]["Authorization"] == "Bearer object-token"
    assert patches[0][3]["loyaltyPoints"]["balance"] == {"int": 42}
    assert patches[0][3]["id"] == "3388000000022000000.v3-c7"


async def test_test_mode_pushes_only_when_the_job_is_run(settings: Settings) -> None:
    """PASS-14: with the stand-in (test mode) pass-updates has no schedule; with a sender it runs
    every minute."""
    engine = make_engine(settings.database_url or "")
    sessionmaker = make_sessionmaker(engine)
    sender = PlatformPushes(_identity, _loopback)
    for pushes, scheduled in ((PushStandIn(), False), (sender, True)):
        worker = make_worker(
            make_queue(settings), JobContext(sessionmaker=sessionmaker, clock=SystemClock(), wallet_pushes=pushes)
        )
        crons = {job.function.__name__: job.cron for job in worker.cron_jobs}
        assert ("pass_updates" in crons) is scheduled
        if scheduled:
            assert crons["pass_updates"] == "* * * * *"
    await sender.aclose()
    await engine.dispose()
