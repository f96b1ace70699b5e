"""Webhook deliveries end to end against a real HTTP receiver: the signature, retries on the
service clock, the 10-second cut, the address check at delivery, and the docs' verifier."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from loyalty_api.adapters.webhook_sender import Sender
from loyalty_api.app import create_app
from loyalty_api.settings import Settings
from loyalty_core.events.jobs import LEASE
from tests.support.receiver import Received, receiver
from tests.support.service import ADMIN
from tests.support.service_webhooks import (
    AT,
    RUN,
    advance,
    deliveries,
    hooks_client,
    hooks_tenant,
    set_clock,
    settled,
    token_of,
)
from tests.support.tls_receiver import tls_receiver
from tests.support.webhooks import ENDPOINTS

DOCS = Path(__file__).parents[2] / "docs" / "webhooks.md"


def docs_verifier() -> Any:
    """``verify_webhook`` exactly as docs/webhooks.md shows it."""
    (code,) = re.findall(r"```python\n(.*?)```", DOCS.read_text(), re.S)
    scope: dict[str, Any] = {}
    exec(compile(code, str(DOCS), "exec"), scope)
    return scope["verify_webhook"]


@pytest.fixture
async def frozen(client: AsyncTestClient[Litestar]) -> Any:
    await advance(client, AT)
    yield
    await client.delete("/admin/v1/test-clock", headers=ADMIN)


@pytest.mark.usefixtures("frozen")
async def test_a_ping_arrives_signed_and_verifies(client: AsyncTestClient[Litestar]) -> None:
    headers = await hooks_tenant(client)
    verify = docs_verifier()
    with receiver() as hook:
        made = (await client.post(ENDPOINTS, json={"url": hook.url, "events": ["*"]}, headers=headers)).json()["data"]
        sent = await client.post(f"{ENDPOINTS}/{made['id']}/test", headers=headers)
        assert sent.status_code == 202
        (row,) = await settled(client, headers, made["id"], 1)
    assert (row["status"], row["attempt"], row["response_status"]) == ("succeeded", 1, 200)
    (got,) = hook.received
    assert got.headers["content-type"] == "application/json"
    assert got.headers["loyalty-event-id"] == sent.json()["data"]["event_id"]
    assert got.headers["loyalty-event-type"] == "ping"
    signed = got.headers["loyalty-signature"]
    assert re.fullmatch(r"t=\d+,v1=[0-9a-f]{64}", signed)
    assert signed.startswith(f"t={int(AT.timestamp())},")
    stamp = AT.timestamp()
    assert verify(got.body, signed, made["secret"], now=stamp + 60)
    assert not verify(got.body.replace(b"ping", b"pong"), signed, made["secret"], now=stamp)
    assert not verify(got.body, signed, "whsec_" + "x" * 32, now=stamp)
    assert not verify(got.body, signed, made["secret"], now=stamp + 301)


@pytest.mark.usefixtures("frozen")
async def test_while_rotating_both_secrets_sign(client: AsyncTestClient[Litestar]) -> None:
    crm = await hooks_client(client)
    headers = await token_of(client, crm)
    verify = docs_verifier()
    with receiver() as hook:
        made = (await client.post(ENDPOINTS, json={"url": hook.url, "events": ["*"]}, headers=headers)).json()["data"]
        rotated = (await client.post(f"{ENDPOINTS}/{made['id']}/rotate-secret", headers=headers)).json()["data"]
        await client.post(f"{ENDPOINTS}/{made['id']}/test", headers=headers)
        await settled(client, headers, made["id"], 1)
        await advance(client, AT + timedelta(hours=24))
        headers = await token_of(client, crm)  # the first token ended meanwhile
        await client.post(f"{ENDPOINTS}/{made['id']}/test", headers=headers)
        await settled(client, headers, made["id"], 2)
    first, second = hook.received
    assert first.headers["loyalty-signature"].count("v1=") == 2
    for secret in (made["secret"], rotated["secret"]):
        assert verify(first.body, first.headers["loyalty-signature"], secret, now=AT.timestamp())
    assert second.headers["loyalty-signature"].count("v1=") == 1
    later = (AT + timedelta(hours=24)).timestamp()
    assert verify(second.body, second.headers["loyalty-signature"], rotated["secret"], now=later)
    assert not verify(second.body, second.headers["loyalty-signature"], made["secret"], now=later)


@pytest.mark.usefixtures("frozen")
async def test_each_retired_secret_signs_for_a_day_from_its_own_retirement(client: AsyncTestClient[Litestar]) -> None:
    """EVENT-15: two rotations an hour apart leave three secrets signing (the current one and both
    retired ones); each retired one stops 24 hours after its own retirement, not at the next
    rotation."""
    crm = await hooks_client(client)
    verify = docs_verifier()
    later = AT + timedelta(hours=1)
    with receiver() as hook:
        headers = await token_of(client, crm)
        made = (await client.post(ENDPOINTS, json={"url": hook.url, "events": ["*"]}, headers=headers)).json()["data"]
        first = (await client.post(f"{ENDPOINTS}/{made['id']}/rotate-secret", headers=headers)).json()["data"]
        await advance(client, later)
        headers = await token_of(client, crm)
        second = (await client.post(f"{ENDPOINTS}/{made['id']}/rotate-secret", headers=headers)).json()["data"]
        secrets = [made["secret"], first["secret"], second["secret"]]
        for n, at in enumerate((later, AT + timedelta(hours=24), later + timedelta(hours=24)), start=1):
            await advance(client, at)
            headers = await token_of(client, crm)
            assert (await client.post(f"{ENDPOINTS}/{made['id']}/test", headers=headers)).status_code == 202
            await settled(client, headers, made["id"], n)
    signing = [
        [verify(got.body, got.headers["loyalty-signature"], secret, now=at.timestamp()) for secret in secrets]
        for got, at in zip(hook.received, (later, AT + timedelta(hours=24), later + timedelta(hours=24)), strict=True)
    ]
    assert signing == [[True, True, True], [False, True, True], [False, False, True]]
    assert [got.headers["loyalty-signature"].count("v1=") for got in hook.received] == [3, 2, 1]


@pytest.mark.usefixtures("frozen")
async def test_two_failures_then_success_on_the_clocks_schedule(client: AsyncTestClient[Litestar]) -> None:
    headers = await hooks_tenant(client)
    with receiver() as hook:
        hook.answers = [500, 500, 200]
        made = (await client.post(ENDPOINTS, json={"url": hook.url, "events": ["*"]}, headers=headers)).json()["data"]
        await client.post(f"{ENDPOINTS}/{made['id']}/test", headers=headers)
        log = await settled(client, headers, made["id"], 2)
        assert [(r["attempt"], r["status"], r["response_status"]) for r in log] == [
            (1, "failed", 500),
            (2, "pending", None),
        ]
        assert log[1]["next_attempt_at"] == "2033-03-01T09:01:00Z"
        assert log[0]["next_attempt_at"] == "2033-03-01T09:01:00Z"
        await advance(client, AT + timedelta(seconds=59))
        assert (await client.post(RUN, headers=ADMIN)).json()["data"]["result"] == {}
        await advance(client, AT + timedelta(minutes=1))
        log = await settled(client, headers, made["id"], 3)
        assert log[2]["next_attempt_at"] == "2033-03-01T09:06:00Z"
        await advance(client, AT + timedelta(minutes=6))
        log = await settled(client, headers, made["id"], 3)
    assert [(r["attempt"], r["status"], r["response_status"]) for r in log] == [
        (1, "failed", 500),
        (2, "failed", 500),
        (3, "succeeded", 200),
    ]
    assert len(hook.received) == 3
    assert len({r.headers["loyalty-event-id"] for r in hook.received}) == 1


@pytest.mark.usefixtures("frozen")
async def test_a_receiver_that_hangs_is_cut_at_ten_seconds(client: AsyncTestClient[Litestar]) -> None:
    headers = await hooks_tenant(client)
    with receiver() as hook:
        hook.answers = [15.0]
        made = (await client.post(ENDPOINTS, json={"url": hook.url, "events": ["*"]}, headers=headers)).json()["data"]
        await client.post(f"{ENDPOINTS}/{made['id']}/test", headers=headers)
        first, _ = await settled(client, headers, made["id"], 2)
    assert (first["status"], first["response_status"], first["error"]) == (
        "failed",
        None,
        "No answer within 10 seconds.",
    )
    assert 10_000 <= first["duration_ms"] < 12_000


async def test_the_address_is_checked_again_at_delivery(settings: Settings) -> None:
    """A name that resolved to a public address at registration and to a private one now is not sent to."""
    answers = {"hooks.example.com": ["10.0.0.7"]}

    async def resolve(host: str, port: int) -> list[str]:
        return answers[host]

    sender = Sender(resolve, test_mode=False)
    try:
        outcome = await sender.post("https://hooks.example.com/in", b"{}", {})
    finally:
        await sender.aclose()
    assert (outcome.succeeded, outcome.response_status, outcome.error) == (
        False,
        None,
        "The URL resolves to an address that is not publicly routable.",
    )


async def test_the_request_goes_to_the_checked_address_under_the_urls_host_name() -> None:
    """No second lookup: the scripted answer is the address connected to, the URL's name the Host."""

    async def resolve(host: str, port: int) -> list[str]:
        assert host == "receiver.invalid"
        return ["127.0.0.1"]

    with receiver() as hook:
        sender = Sender(resolve, test_mode=True)
        try:
            outcome = await sender.post(f"http://receiver.invalid:{hook.port}/in?x=1", b"{}", {"X-A": "1"})
        finally:
            await sender.aclose()
    assert (outcome.succeeded, outcome.response_status) == (True, 200)
    (got,) = hook.received
    assert isinstance(got, Received)
    assert (got.path, got.headers["host"], got.headers["x-a"]) == ("/in?x=1", f"receiver.invalid:{hook.port}", "1")


async def test_redirects_are_not_followed() -> None:
    async def resolve(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    with receiver() as hook:
        hook.answers = [302]
        sender = Sender(resolve, test_mode=True)
        try:
            outcome = await sender.post(hook.url, b"{}", {})
        finally:
            await sender.aclose()
    assert (outcome.succeeded, outcome.response_status, outcome.error) == (False, 302, "The receiver answered 302.")
    assert len(hook.received) == 1


@pytest.fixture
async def external_worker_client(settings: Settings) -> Any:
    """The service with its worker elsewhere: nothing in this process delivers unless a test runs the job."""
    async with AsyncTestClient(app=create_app(msgspec.structs.replace(settings, worker="external"))) as client:
        yield client


async def test_a_worker_killed_mid_delivery_leaves_the_event_to_be_sent_again(
    external_worker_client: AsyncTestClient[Litestar], settings: Settings
) -> None:
    """At least once, with the same event id: the killed attempt was never recorded, so it is due
    again when its lease ends (and not before: no second worker sends it while the first may)."""
    client = external_worker_client
    await client.delete("/admin/v1/test-clock", headers=ADMIN)  # the separate worker reads the wall clock
    headers = await hooks_tenant(client)
    with receiver() as hook:
        hook.answers = [30.0, 200]
        made = (await client.post(ENDPOINTS, json={"url": hook.url, "events": ["*"]}, headers=headers)).json()["data"]
        sent = await client.post(f"{ENDPOINTS}/{made['id']}/test", headers=headers)
        worker = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.support.webhook_worker",
            settings.database_url or "",
            settings.encryption_key or "",
            cwd=Path(__file__).parents[2],
            start_new_session=True,  # killed as a group below, whatever happens
        )
        try:
            for _ in range(300):
                if hook.received:
                    break
                await asyncio.sleep(0.05)
            assert len(hook.received) == 1, "the worker never reached the receiver"
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(worker.pid, signal.SIGKILL)
            assert await worker.wait() == -signal.SIGKILL
        log = await deliveries(client, headers, made["id"])
        assert [(r["attempt"], r["status"]) for r in log] == [(1, "pending")]
        ran = await client.post(RUN, headers=ADMIN)
        assert ran.status_code == 200
        # leased to the dead worker for a while yet: not sent again, still pending
        assert len(hook.received) == 1
        assert [(r["attempt"], r["status"]) for r in await deliveries(client, headers, made["id"])] == [(1, "pending")]
        await set_clock(client, datetime.now(UTC) + LEASE + timedelta(seconds=1))
        for _ in range(100):
            ran = await client.post(RUN, headers=ADMIN)
            if ran.json()["data"]["result"].get("succeeded"):
                break
            await asyncio.sleep(0.1)  # PostgreSQL notices the dead worker's connection
        log = await deliveries(client, headers, made["id"])
    assert [(r["attempt"], r["status"], r["response_status"]) for r in log] == [(1, "succeeded", 200)], [
        (r["error"], r["duration_ms"]) for r in log
    ]
    event_id = sent.json()["data"]["event_id"]
    assert [r.headers["loyalty-event-id"] for r in hook.received] == [event_id, event_id]


@pytest.mark.usefixtures("frozen")
async def test_a_vendors_events_reach_only_its_own_endpoints(client: AsyncTestClient[Litestar]) -> None:
    """A registration records customer.created; it is delivered to the shop's endpoint with the data
    the API answered, and never to another shop's endpoint listening to everything."""
    shop = await hooks_tenant(client)
    other = await hooks_tenant(client)
    with receiver() as mine, receiver() as theirs:
        made = (
            await client.post(ENDPOINTS, json={"url": mine.url, "events": ["customer.created"]}, headers=shop)
        ).json()
        await client.post(ENDPOINTS, json={"url": theirs.url, "events": ["*"]}, headers=other)
        registered = await client.post("/api/v1/customers", json={"first_name": "Ada"}, headers=shop)
        assert registered.status_code == 201
        (row,) = await settled(client, shop, made["data"]["id"], 1)
    assert row["status"] == "succeeded"
    (got,) = mine.received
    body = msgspec.json.decode(got.body)
    assert (body["type"], body["data"]) == ("customer.created", registered.json()["data"])
    assert body["id"] == got.headers["loyalty-event-id"]
    assert theirs.received == []
    feed = await client.get("/api/v1/events", headers=other)
    assert feed.json()["data"]["data"] == []


@pytest.mark.usefixtures("frozen")
async def test_events_are_kept_thirty_days(client: AsyncTestClient[Litestar]) -> None:
    """The prune-events job deletes an event once it is more than 30 days old, not before."""
    crm = await hooks_client(client)
    shop = await token_of(client, crm)
    assert (await client.post("/api/v1/customers", json={"first_name": "Old"}, headers=shop)).status_code == 201
    (event,) = (await client.get("/api/v1/events", headers=shop)).json()["data"]["data"]
    prune = RUN.replace("webhook-deliveries", "prune-events")
    await advance(client, AT + timedelta(days=30))
    assert (await client.post(prune, headers=ADMIN)).status_code == 200
    shop = await token_of(client, crm)
    assert (await client.get(f"/api/v1/events/{event['id']}", headers=shop)).status_code == 200
    await advance(client, AT + timedelta(days=30, seconds=1))
    ran = await client.post(prune, headers=ADMIN)
    assert ran.json()["data"]["result"]["events"] >= 1
    gone = await client.get(f"/api/v1/events/{event['id']}", headers=shop)
    assert gone.status_code == 404


async def test_tls_is_verified_against_the_urls_host_name_at_the_checked_address() -> None:
    """The connection goes to the checked address, and the certificate must name the URL's host."""

    async def resolve(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    with tls_receiver("hooks.test") as (port, trusting, hosts):
        sender = Sender(resolve, test_mode=True, verify=trusting)
        try:
            named = await sender.post(f"https://hooks.test:{port}/in", b"{}", {})
            other = await sender.post(f"https://elsewhere.test:{port}/in", b"{}", {})
        finally:
            await sender.aclose()
    assert (named.succeeded, named.response_status) == (True, 204)
    assert hosts == [f"hooks.test:{port}"]
    assert (other.succeeded, other.response_status) == (False, None)
    assert other.error is not None
    assert "certificate" in other.error.lower()
