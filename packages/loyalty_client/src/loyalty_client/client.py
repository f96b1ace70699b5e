"""``LoyaltyClient`` (blocking) and ``AsyncLoyaltyClient`` (asyncio) over httpx.

Both fetch a token with the client credentials and renew it before it expires; on a 401
UNAUTHENTICATED (a token revoked or expired early) they fetch one fresh token and repeat the call
once. Retries follow ``loyalty_client.retries``. ``sleep`` and ``clock`` (monotonic seconds) are
injectable so tests wait for nothing; ``transport`` or ``http_client`` replaces the network."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from types import TracebackType
from typing import Any, Self

import httpx

from loyalty_client.awaitable import AsyncOperations
from loyalty_client.blocking import Operations
from loyalty_client.calls import content_of, error_of, query_of, result_of, url_of, with_key
from loyalty_client.errors import LoyaltyError
from loyalty_client.models import TokenResponse
from loyalty_client.operation import Operation, PathValues, QueryValues, RequestBody
from loyalty_client.operations import ISSUE_TOKEN
from loyalty_client.retries import retry_delay
from loyalty_client.tokens import TokenCache

DEFAULT_TIMEOUT = 10.0
JSON = {"Content-Type": "application/json", "Accept": "application/json"}


def renews_token(op: Operation, error: LoyaltyError) -> bool:
    """INVALID_CLIENT is a 401 too, but a new token does not help it."""
    return op.auth and error.code == "UNAUTHENTICATED"


class LoyaltyClient(Operations):
    """The blocking client: ``with LoyaltyClient(url, client_id, secret) as loyalty: ...``."""

    def __init__(
        self,
        base_url: str,
        client_id: str,
        client_secret: str,
        *,
        transport: httpx.BaseTransport | None = None,
        http_client: httpx.Client | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = http_client or httpx.Client(transport=transport, timeout=timeout)
        self._owns_http = http_client is None
        self._sleep = sleep
        self._clock = clock
        self._tokens = TokenCache(client_id, client_secret)
        self._token_lock = threading.Lock()

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def _call(self, op: Operation, path: PathValues, query: QueryValues, body: RequestBody) -> Any:
        body = with_key(op, body)
        url, params, content = url_of(self.base_url, op, path), query_of(query), content_of(body)
        attempt, waited, renewed = 1, 0.0, False
        while True:
            headers = {**JSON, **({"Authorization": f"Bearer {self._token()}"} if op.auth else {})}
            response = self._http.request(op.method, url, params=params, content=content, headers=headers)
            if response.is_success:
                return result_of(op, response)
            error = error_of(response)
            if renews_token(op, error) and not renewed:
                renewed = True
                self._tokens.drop()
                continue
            delay = retry_delay(op, error, attempt, waited)
            if delay is None:
                raise error
            self._sleep(delay)
            waited += delay
            attempt += 1

    def _token(self) -> str:
        with self._token_lock:
            token = self._tokens.current(self._clock())
            if token is None:
                issued_at = self._clock()
                answer: TokenResponse = self._call(ISSUE_TOKEN, {}, {}, self._tokens.request())
                token = self._tokens.keep(answer, issued_at)
            return token

    def _pages(self, op: Operation, path: PathValues, query: QueryValues) -> Iterator[Any]:
        page = 1
        while True:
            answer = self._call(op, path, {**query, "page": page}, None)
            yield from answer.data
            if answer.links.next is None or answer.meta.current_page >= answer.meta.last_page:
                return
            page = answer.meta.current_page + 1


class AsyncLoyaltyClient(AsyncOperations):
    """The asyncio client: ``async with AsyncLoyaltyClient(url, client_id, secret) as loyalty: ...``."""

    def __init__(
        self,
        base_url: str,
        client_id: str,
        client_secret: str,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        http_client: httpx.AsyncClient | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = http_client or httpx.AsyncClient(transport=transport, timeout=timeout)
        self._owns_http = http_client is None
        self._sleep = sleep
        self._clock = clock
        self._tokens = TokenCache(client_id, client_secret)
        self._token_lock: asyncio.Lock | None = None

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.aclose()

    async def _call(self, op: Operation, path: PathValues, query: QueryValues, body: RequestBody) -> Any:
        body = with_key(op, body)
        url, params, content = url_of(self.base_url, op, path), query_of(query), content_of(body)
        attempt, waited, renewed = 1, 0.0, False
        while True:
            headers = {**JSON, **({"Authorization": f"Bearer {await self._token()}"} if op.auth else {})}
            response = await self._http.request(op.method, url, params=params, content=content, headers=headers)
            if response.is_success:
                return result_of(op, response)
            error = error_of(response)
            if renews_token(op, error) and not renewed:
                renewed = True
                self._tokens.drop()
                continue
            delay = retry_delay(op, error, attempt, waited)
            if delay is None:
                raise error
            await self._sleep(delay)
            waited += delay
            attempt += 1

    async def _token(self) -> str:
        # made here, not in __init__, so the lock belongs to the loop that uses the client
        if self._token_lock is None:
            self._token_lock = asyncio.Lock()
        async with self._token_lock:
            token = self._tokens.current(self._clock())
            if token is None:
                issued_at = self._clock()
                answer: TokenResponse = await self._call(ISSUE_TOKEN, {}, {}, self._tokens.request())
                token = self._tokens.keep(answer, issued_at)
            return token

    async def _pages(self, op: Operation, path: PathValues, query: QueryValues) -> AsyncIterator[Any]:
        page = 1
        while True:
            answer = await self._call(op, path, {**query, "page": page}, None)
            for item in answer.data:
                yield item
            if answer.links.next is None or answer.meta.current_page >= answer.meta.last_page:
                return
            page = answer.meta.current_page + 1
