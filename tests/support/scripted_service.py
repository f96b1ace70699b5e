"""A scripted service for the client's tests: ``/oauth/token`` hands out numbered tokens; every
other request gets the next queued answer (or 200 ``{"data": {}}`` when none is queued); a queued
``httpx.TransportError`` is raised instead, as a network that gives no answer. Every request is
recorded, and so is every wait the client asks its injected sleep for."""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import httpx

from loyalty_client import AsyncLoyaltyClient, LoyaltyClient

BASE = "https://loyalty.test"
WALLET = {
    "id": 1,
    "customer_id": 3,
    "balance": 40,
    "expiring_soon": 0,
    "pending_points": 0,
    "next_available_at": None,
    "created_at": "2026-11-26T10:00:00Z",
    "updated_at": "2026-11-26T10:00:00Z",
}
TRANSACTION = {
    "id": 7,
    "customer_id": 3,
    "idempotency_key": "k",
    "total_amount": 1250,
    "description": None,
    "external_reference": None,
    "branch": None,
    "created_at": "2026-11-26T10:00:00Z",
    "points_earned": 12,
    "rules_applied": [],
    "items": [],
    "returned_amount": 0,
    "points_reversed": 0,
    "points_available_at": "2026-11-26T10:00:00Z",
}


def error(status: int, code: str, *, retry_after: int | None = None, details: Any = None) -> httpx.Response:
    body = {"error": {"code": code, "message": code.lower(), "status": status, "request_id": f"req-{code}"}}
    if details is not None:
        body["error"]["details"] = details
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
    return httpx.Response(status, json=body, headers={**headers, "X-Request-ID": f"req-{code}"})


def data(value: Any, status: int = 200) -> httpx.Response:
    return httpx.Response(status, json={"data": value})


@dataclass
class Clock:
    now: float = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Scripted:
    answers: deque[httpx.Response | httpx.TransportError] = field(default_factory=deque)
    requests: list[httpx.Request] = field(default_factory=list)
    slept: list[float] = field(default_factory=list)
    tokens_issued: int = 0
    expires_in: int = 3600
    clock: Clock = field(default_factory=Clock)

    def queue(self, *answers: httpx.Response | httpx.TransportError) -> None:
        self.answers.extend(answers)

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.url.path == "/oauth/token":
            self.tokens_issued += 1
            token = {
                "token_type": "Bearer",
                "access_token": f"token-{self.tokens_issued}",
                "expires_in": self.expires_in,
            }
            return httpx.Response(200, json=token)
        answer = self.answers.popleft() if self.answers else data({})
        if isinstance(answer, httpx.TransportError):
            raise answer
        return answer

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.clock.now += seconds

    async def async_sleep(self, seconds: float) -> None:
        self.sleep(seconds)

    def client(self) -> LoyaltyClient:
        transport = httpx.MockTransport(self.handle)
        return LoyaltyClient(BASE, "till", "secret", transport=transport, sleep=self.sleep, clock=self.clock)

    def async_client(self) -> AsyncLoyaltyClient:
        transport = httpx.MockTransport(self.handle)
        return AsyncLoyaltyClient(BASE, "till", "secret", transport=transport, sleep=self.async_sleep, clock=self.clock)

    def calls(self) -> list[str]:
        """Every request but the token requests, as ``METHOD /path``."""
        return [f"{r.method} {r.url.path}" for r in self.requests if r.url.path != "/oauth/token"]

    def bodies(self) -> list[Any]:
        return [json.loads(r.content) for r in self.requests if r.url.path != "/oauth/token" and r.content]

    def authorizations(self) -> list[str | None]:
        return [r.headers.get("authorization") for r in self.requests if r.url.path != "/oauth/token"]
