"""CLIENT-4: a call that gets no answer (every ``httpx.TransportError``: refused, timed out, broken
off) raises ``APIConnectionError``, a ``LoyaltyError``, with the transport's error as its cause.
CLIENT-1: a call that is safe to repeat (a read, a write with an idempotency key) is repeated after
it as after a 503 without ``Retry-After``; any other write raises at once."""

from __future__ import annotations

import httpx
import pytest

from loyalty_client import APIConnectionError, LoyaltyClient, LoyaltyError
from loyalty_client.error_codes import ServiceUnavailable
from loyalty_client.models import TransactionBody
from tests.support.scripted_service import BASE, TRANSACTION, WALLET, Scripted, data, error

PURCHASE = TransactionBody(identifier="CARD0001", total_amount=1250)
WALLET_PATH = "GET /api/v1/customers/3/wallet"


def refused() -> httpx.ConnectError:
    return httpx.ConnectError("[Errno 111] Connection refused")


def test_a_read_that_gets_no_answer_is_tried_three_times_then_raised(service: Scripted) -> None:
    """CLIENT-1, CLIENT-4: one and two seconds of waiting, as for a 503 without Retry-After, then the
    last failure is raised with the transport's error chained."""
    failures = [refused(), refused(), refused()]
    service.queue(*failures)
    with service.client() as loyalty, pytest.raises(APIConnectionError) as raised:
        loyalty.get_wallet(3)
    assert service.calls() == [WALLET_PATH] * 3
    assert service.slept == [1.0, 2.0]
    assert raised.value.__cause__ is failures[2]
    assert isinstance(raised.value, LoyaltyError)
    assert (raised.value.code, raised.value.status, raised.value.request_id, raised.value.details) == (
        "",
        0,
        None,
        None,
    )
    assert str(raised.value) == (
        "no answer to GET /api/v1/customers/{customer}/wallet (ConnectError: [Errno 111] Connection refused)"
    )


def test_a_read_answered_after_a_timeout_returns_the_answer(service: Scripted) -> None:
    """CLIENT-1"""
    service.queue(httpx.ReadTimeout("timed out"), data(WALLET))
    with service.client() as loyalty:
        wallet = loyalty.get_wallet(3)
    assert wallet.balance == 40
    assert service.calls() == [WALLET_PATH] * 2
    assert service.slept == [1.0]


def test_a_keyed_write_is_repeated_with_its_one_key(service: Scripted) -> None:
    """CLIENT-1, CLIENT-3: the purchase may have been booked before its answer broke off; the repeat
    carries the same key, so the service books it once."""
    service.queue(httpx.RemoteProtocolError("Server disconnected without sending a response."), data(TRANSACTION, 201))
    with service.client() as loyalty:
        transaction = loyalty.create_transaction(PURCHASE)
    assert transaction.id == 7
    first, second = service.bodies()
    assert first == second
    assert len(first["idempotency_key"]) == 36
    assert service.slept == [1.0]


def test_a_write_without_a_key_is_raised_at_once(service: Scripted) -> None:
    """CLIENT-1: the card may have been mailed before the answer was lost; a repeat could mail it twice."""
    failure = httpx.ReadTimeout("timed out")
    service.queue(failure, data({}))
    with service.client() as loyalty, pytest.raises(APIConnectionError) as raised:
        loyalty.send_card(3)
    assert service.calls() == ["POST /api/v1/customers/3/send-card"]
    assert service.slept == []
    assert raised.value.__cause__ is failure
    assert str(raised.value) == "no answer to POST /api/v1/customers/{customer}/send-card (ReadTimeout: timed out)"


def test_a_verify_that_gets_no_answer_is_raised_at_once(service: Scripted) -> None:
    """CLIENT-1: verifying spends the code; a repeat could answer CODE_ALREADY_USED for a verify that worked."""
    service.queue(httpx.ConnectTimeout(""))
    with service.client() as loyalty, pytest.raises(APIConnectionError) as raised:
        loyalty.verify_redemption("RDM-ABC")
    assert len(service.calls()) == 1
    assert str(raised.value) == "no answer to POST /api/v1/redemptions/{code}/verify (ConnectTimeout)"


def test_no_answer_and_a_503_share_the_three_attempts(service: Scripted) -> None:
    """CLIENT-1: one budget of attempts and waiting per call, whatever each attempt met."""
    service.queue(refused(), error(503, "SERVICE_UNAVAILABLE", retry_after=5), error(503, "SERVICE_UNAVAILABLE"))
    with service.client() as loyalty, pytest.raises(ServiceUnavailable):
        loyalty.get_wallet(3)
    assert service.calls() == [WALLET_PATH] * 3
    assert service.slept == [1.0, 5.0]


def test_a_token_request_that_gets_no_answer_is_an_attempt_of_the_call() -> None:
    """CLIENT-1, CLIENT-4: the read is repeated, fetching its token again; the token request alone
    (a write without a key) is never repeated, so a send-card whose token gets no answer raises."""
    failures: list[httpx.TransportError] = [refused(), refused()]
    seen: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path}")
        if request.url.path == "/oauth/token":
            if failures:
                raise failures.pop(0)
            return httpx.Response(200, json={"token_type": "Bearer", "access_token": "t", "expires_in": 3600})
        return data(WALLET)

    slept: list[float] = []
    transport = httpx.MockTransport(handle)
    with LoyaltyClient(BASE, "till", "secret", transport=transport, sleep=slept.append) as loyalty:
        assert loyalty.get_wallet(3).balance == 40
    assert seen == ["POST /oauth/token", "POST /oauth/token", "POST /oauth/token", WALLET_PATH]
    assert slept == [1.0, 2.0]

    failures.append(refused())
    seen.clear()
    with (
        LoyaltyClient(BASE, "till", "secret", transport=transport, sleep=slept.append) as loyalty,
        pytest.raises(APIConnectionError) as raised,
    ):
        loyalty.send_card(3)
    assert seen == ["POST /oauth/token"]
    assert str(raised.value) == "no answer to POST /oauth/token (ConnectError: [Errno 111] Connection refused)"


async def test_the_async_client_repeats_a_read_and_raises_alike(service: Scripted) -> None:
    """CLIENT-1, CLIENT-4"""
    failures = [refused(), httpx.ReadTimeout("timed out"), refused()]
    service.queue(*failures)
    async with service.async_client() as loyalty:
        with pytest.raises(APIConnectionError) as raised:
            await loyalty.get_wallet(3)
    assert service.calls() == [WALLET_PATH] * 3
    assert service.slept == [1.0, 2.0]
    assert raised.value.__cause__ is failures[2]


async def test_the_async_client_raises_a_write_without_a_key_at_once(service: Scripted) -> None:
    """CLIENT-1, CLIENT-4"""
    failure = httpx.RemoteProtocolError("Server disconnected without sending a response.")
    service.queue(failure)
    async with service.async_client() as loyalty:
        with pytest.raises(APIConnectionError) as raised:
            await loyalty.send_card(3)
    assert service.calls() == ["POST /api/v1/customers/3/send-card"]
    assert service.slept == []
    assert raised.value.__cause__ is failure


async def test_the_async_client_repeats_a_keyed_write_with_its_one_key(service: Scripted) -> None:
    """CLIENT-1, CLIENT-3"""
    service.queue(httpx.WriteTimeout("timed out"), data(TRANSACTION, 201))
    async with service.async_client() as loyalty:
        transaction = await loyalty.create_transaction(PURCHASE)
    assert transaction.points_earned == 12
    first, second = service.bodies()
    assert first == second
    assert service.slept == [1.0]
