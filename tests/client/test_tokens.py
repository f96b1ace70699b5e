"""CLIENT-2: a token from the client credentials, kept until shortly before it expires, renewed
then; a 401 UNAUTHENTICATED gets one fresh token and one repeat, INVALID_CLIENT none."""

from __future__ import annotations

import json

import httpx
import pytest

from loyalty_client import LoyaltyClient
from loyalty_client.error_codes import InvalidClient, Unauthenticated
from tests.support.scripted_service import WALLET, Scripted, data, error


def test_one_token_serves_calls_until_shortly_before_it_expires(service: Scripted) -> None:
    """CLIENT-2: a 3600 s token is renewed 30 s before its end, not after it."""
    with service.client() as loyalty:
        service.queue(data(WALLET), data(WALLET), data(WALLET))
        loyalty.get_wallet(3)
        service.clock.now += 3569
        loyalty.get_wallet(3)
        service.clock.now += 1
        loyalty.get_wallet(3)
    assert service.authorizations() == ["Bearer token-1", "Bearer token-1", "Bearer token-2"]
    assert service.tokens_issued == 2


def test_the_token_request_sends_the_client_credentials(service: Scripted) -> None:
    """CLIENT-2"""
    service.queue(data(WALLET))
    with service.client() as loyalty:
        loyalty.get_wallet(3)
    token_request = service.requests[0]
    assert (token_request.method, token_request.url.path) == ("POST", "/oauth/token")
    assert json.loads(token_request.content) == {
        "grant_type": "client_credentials",
        "client_id": "till",
        "client_secret": "secret",
    }
    assert "authorization" not in token_request.headers


def test_a_short_token_is_renewed_at_half_its_lifetime(service: Scripted) -> None:
    """CLIENT-2: a 40 s token is renewed after 20 s, so a renewal never comes after the end."""
    service.expires_in = 40
    with service.client() as loyalty:
        service.queue(data(WALLET), data(WALLET), data(WALLET))
        loyalty.get_wallet(3)
        service.clock.now += 19
        loyalty.get_wallet(3)
        service.clock.now += 1
        loyalty.get_wallet(3)
    assert service.authorizations() == ["Bearer token-1", "Bearer token-1", "Bearer token-2"]


def test_a_401_gets_one_fresh_token_and_one_repeat(service: Scripted) -> None:
    """CLIENT-2: the token was revoked early; the repeat carries the new one."""
    service.queue(error(401, "UNAUTHENTICATED"), data(WALLET))
    with service.client() as loyalty:
        wallet = loyalty.get_wallet(3)
    assert service.authorizations() == ["Bearer token-1", "Bearer token-2"]
    assert wallet.balance == 40


def test_a_second_401_is_raised(service: Scripted) -> None:
    """CLIENT-2: one renewal per call, never a loop."""
    service.queue(error(401, "UNAUTHENTICATED"), error(401, "UNAUTHENTICATED"), data(WALLET))
    with service.client() as loyalty, pytest.raises(Unauthenticated) as raised:
        loyalty.get_wallet(3)
    assert service.tokens_issued == 2
    assert len(service.calls()) == 2
    assert raised.value.status == 401


def test_invalid_client_gets_no_new_token(service: Scripted) -> None:
    """CLIENT-2: the credential itself is refused; a new token would not help."""
    service.queue(error(401, "INVALID_CLIENT"))
    with service.client() as loyalty, pytest.raises(InvalidClient):
        loyalty.get_wallet(3)
    assert service.tokens_issued == 1


def test_refused_credentials_raise_invalid_client_from_the_token_request() -> None:
    """CLIENT-2"""

    def refuse(request: httpx.Request) -> httpx.Response:
        return error(401, "INVALID_CLIENT")

    transport = httpx.MockTransport(refuse)
    with (
        LoyaltyClient("https://loyalty.test", "till", "wrong", transport=transport) as loyalty,
        pytest.raises(InvalidClient) as raised,
    ):
        loyalty.get_wallet(3)
    assert raised.value.request_id == "req-INVALID_CLIENT"


async def test_the_async_client_renews_across_expiry_and_after_a_401(service: Scripted) -> None:
    """CLIENT-2"""
    service.queue(data(WALLET), error(401, "UNAUTHENTICATED"), data(WALLET))
    async with service.async_client() as loyalty:
        await loyalty.get_wallet(3)
        service.clock.now += 3571
        await loyalty.get_wallet(3)
    assert service.authorizations() == ["Bearer token-1", "Bearer token-2", "Bearer token-3"]
