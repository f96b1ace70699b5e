"""CLIENT-1: 429 and 503 are retried after ``Retry-After``, at most three attempts and 60 seconds of
waiting in all; PLAN_LIMIT_EXCEEDED, SUBSCRIPTION_EXPIRED and writes without an idempotency key
never. CLIENT-3: the key is made once, so every attempt carries the same one."""

from __future__ import annotations

import pytest

from loyalty_client.error_codes import (
    CardSendThrottled,
    PlanLimitExceeded,
    RateLimited,
    ServiceUnavailable,
    SubscriptionExpired,
)
from loyalty_client.models import TransactionBody
from tests.support.scripted_service import TRANSACTION, WALLET, Scripted, data, error

PURCHASE = TransactionBody(identifier="CARD0001", total_amount=1250)


def test_a_429_is_retried_after_its_retry_after(service: Scripted) -> None:
    """CLIENT-1: the injected sleep is asked for exactly the Retry-After seconds, then the call repeats."""
    service.queue(error(429, "RATE_LIMITED", retry_after=7), data(WALLET))
    with service.client() as loyalty:
        loyalty.get_wallet(3)
    assert service.slept == [7.0]
    assert service.calls() == ["GET /api/v1/customers/3/wallet", "GET /api/v1/customers/3/wallet"]


def test_a_503_is_retried_after_its_retry_after(service: Scripted) -> None:
    """CLIENT-1"""
    service.queue(error(503, "SERVICE_UNAVAILABLE", retry_after=2), data(WALLET))
    with service.client() as loyalty:
        loyalty.get_wallet(3)
    assert service.slept == [2.0]
    assert len(service.calls()) == 2


def test_a_503_without_retry_after_backs_off_one_then_two_seconds(service: Scripted) -> None:
    """CLIENT-1: no header, so the waits double from one second."""
    service.queue(error(503, "SERVICE_UNAVAILABLE"), error(503, "SERVICE_UNAVAILABLE"), data(WALLET))
    with service.client() as loyalty:
        loyalty.get_wallet(3)
    assert service.slept == [1.0, 2.0]


def test_three_attempts_at_most_then_the_error_is_raised(service: Scripted) -> None:
    """CLIENT-1"""
    service.queue(*(error(429, "RATE_LIMITED", retry_after=1) for _ in range(4)))
    with service.client() as loyalty, pytest.raises(RateLimited) as raised:
        loyalty.get_wallet(3)
    assert len(service.calls()) == 3
    assert service.slept == [1.0, 1.0]
    assert (raised.value.status, raised.value.code, raised.value.request_id) == (
        429,
        "RATE_LIMITED",
        "req-RATE_LIMITED",
    )
    assert len(service.answers) == 1


def test_no_more_than_60_seconds_are_waited_in_all(service: Scripted) -> None:
    """CLIENT-1: 45 s are waited; a second wait of 45 s would pass 60, so the 429 is raised instead."""
    service.queue(error(429, "RATE_LIMITED", retry_after=45), error(429, "RATE_LIMITED", retry_after=45))
    with service.client() as loyalty, pytest.raises(RateLimited):
        loyalty.get_wallet(3)
    assert service.slept == [45.0]
    assert len(service.calls()) == 2


def test_a_retry_after_beyond_60_seconds_is_not_waited_for(service: Scripted) -> None:
    """CLIENT-1"""
    service.queue(error(429, "RATE_LIMITED", retry_after=61))
    with service.client() as loyalty, pytest.raises(RateLimited) as raised:
        loyalty.get_wallet(3)
    assert service.slept == []
    assert raised.value.retry_after == 61.0


def test_plan_limit_exceeded_is_never_retried(service: Scripted) -> None:
    """CLIENT-1: the allowance of the period does not come back by waiting."""
    service.queue(error(429, "PLAN_LIMIT_EXCEEDED", retry_after=1), data(TRANSACTION, 201))
    with service.client() as loyalty, pytest.raises(PlanLimitExceeded) as raised:
        loyalty.create_transaction(PURCHASE)
    assert service.slept == []
    assert service.calls() == ["POST /api/v1/transactions"]
    assert raised.value.status == 429


def test_subscription_expired_is_never_retried(service: Scripted) -> None:
    """CLIENT-1"""
    service.queue(error(403, "SUBSCRIPTION_EXPIRED"), data(TRANSACTION, 201))
    with service.client() as loyalty, pytest.raises(SubscriptionExpired):
        loyalty.create_transaction(PURCHASE)
    assert service.slept == []
    assert len(service.calls()) == 1


def test_a_write_without_an_idempotency_key_is_never_retried(service: Scripted) -> None:
    """CLIENT-1: send-card takes no key, so a repeat could mail the card twice."""
    service.queue(error(429, "CARD_SEND_THROTTLED", retry_after=3, details={"retry_after": 3}))
    with service.client() as loyalty, pytest.raises(CardSendThrottled) as raised:
        loyalty.send_card(3)
    assert service.slept == []
    assert service.calls() == ["POST /api/v1/customers/3/send-card"]
    assert raised.value.details == {"retry_after": 3}


def test_a_verify_is_not_retried_after_a_503(service: Scripted) -> None:
    """CLIENT-1: verifying spends the code; a repeat could answer CODE_ALREADY_USED for a verify that worked."""
    service.queue(error(503, "SERVICE_UNAVAILABLE", retry_after=1))
    with service.client() as loyalty, pytest.raises(ServiceUnavailable):
        loyalty.verify_redemption("RDM-ABC")
    assert len(service.calls()) == 1


def test_a_retried_write_repeats_one_generated_key(service: Scripted) -> None:
    """CLIENT-1, CLIENT-3: both attempts carry the same new key, so the service writes once."""
    service.queue(error(503, "SERVICE_UNAVAILABLE", retry_after=1), data(TRANSACTION, 201))
    with service.client() as loyalty:
        transaction = loyalty.create_transaction(PURCHASE)
    first, second = service.bodies()
    assert first == second
    assert len(first["idempotency_key"]) == 36
    assert first["idempotency_key"].count("-") == 4
    assert transaction.id == 7


def test_each_write_gets_its_own_key_and_a_given_key_is_kept(service: Scripted) -> None:
    """CLIENT-3"""
    service.queue(data(TRANSACTION, 201), data(TRANSACTION, 201), data(TRANSACTION, 201))
    with service.client() as loyalty:
        loyalty.create_transaction(PURCHASE)
        loyalty.create_transaction(PURCHASE)
        loyalty.create_transaction(TransactionBody(identifier="CARD0001", total_amount=1250, idempotency_key="till-9"))
    keys = [body["idempotency_key"] for body in service.bodies()]
    assert keys[0] != keys[1]
    assert keys[2] == "till-9"


async def test_the_async_client_retries_alike(service: Scripted) -> None:
    """CLIENT-1: the awaitable client waits through its injected sleep as well."""
    service.queue(error(429, "RATE_LIMITED", retry_after=4), error(429, "PLAN_LIMIT_EXCEEDED"))
    async with service.async_client() as loyalty:
        with pytest.raises(PlanLimitExceeded):
            await loyalty.create_transaction(PURCHASE)
    assert service.slept == [4.0]
    assert len(service.calls()) == 2
