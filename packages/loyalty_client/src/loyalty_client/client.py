"""``LoyaltyClient`` (blocking) and ``AsyncLoyaltyClient`` (asyncio) over httpx.

Both fetch a token with the client credentials and renew it before it expires; on a 401
UNAUTHENTICATED (a token revoked or expired early) they fetch one fresh token and repeat the call
once. Retries follow ``loyalty_client.retries``; an attempt that gets no answer (every
``httpx.TransportError``, its token request's included) raises ``APIConnectionError`` once the call
is not repeated. ``sleep`` and ``clock`` (monotonic seconds) are injectable so tests wait for
nothing; ``transport`` or ``http_client`` replaces the network."""

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
from loyalty_client.calls import Attempts, Request, connection_error, first_page, headers_of, next_page, result_of
from loyalty_client.errors import APIConnectionError
from loyalty_client.models import TokenResponse
from loyalty_client.operation import Operation, PathValues, QueryValues, RequestBody
from loyalty_client.operations.oauth import ISSUE_TOKEN
from loyalty_client.tokens import TokenCache

DEFAULT_TIMEOUT = 10.0


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
        request = Request.of(self.base_url, op, path, query, body)
        attempts = Attempts(op, self._tokens)
        while True:
            try:
                response = self._send(op, request)
            except APIConnectionError as error:
                self._sleep(attempts.wait_before_repeating(error))
                continue
            if response.is_success:
                return result_of(op, response)
            delay = attempts.wait_after(response)
            if delay is not None:
                self._sleep(delay)

    def _send(self, op: Operation, request: Request) -> httpx.Response:
        """One attempt, with the token fetched first where the call needs one: a token request that
        gets no answer is an attempt of this call that got none."""
        headers = headers_of(self._token() if op.auth else None)
        try:
            return self._http.request(
                op.method, request.url, params=request.params, content=request.content, headers=headers
            )
        except httpx.TransportError as failure:
            raise connection_error(op, failure) from failure

    def _token(self) -> str:
        with self._token_lock:
            token = self._tokens.current(self._clock())
            if token is None:
                issued_at = self._clock()
                answer: TokenResponse = self._call(ISSUE_TOKEN, {}, {}, self._tokens.request())
                token = self._tokens.keep(answer, issued_at)
            return token

    def _pages(self, op: Operation, path: PathValues, query: QueryValues) -> Iterator[Any]:
        page: int | None = first_page(query)
        while page is not None:
            answer = self._call(op, path, {**query, "page": page}, None)
            yield from answer.data
            page = next_page(answer)


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
        request = Request.of(self.base_url, op, path, query, body)
        attempts = Attempts(op, self._tokens)
        while True:
            try:
                response = await self._send(op, request)
            except APIConnectionError as error:
                await self._sleep(attempts.wait_before_repeating(error))
                continue
            if response.is_success:
                return result_of(op, response)
            delay = attempts.wait_after(response)
            if delay is not None:
                await self._sleep(delay)

    async def _send(self, op: Operation, request: Request) -> httpx.Response:
        """One attempt, with the token fetched first where the call needs one (as the blocking
        client's)."""
        headers = headers_of(await self._token() if op.auth else None)
        try:
            return await self._http.request(
                op.method, request.url, params=request.params, content=request.content, headers=headers
            )
        except httpx.TransportError as failure:
            raise connection_error(op, failure) from failure

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
        page: int | None = first_page(query)
        while page is not None:
            answer = await self._call(op, path, {**query, "page": page}, None)
            for item in answer.data:
                yield item
            page = next_page(answer)
