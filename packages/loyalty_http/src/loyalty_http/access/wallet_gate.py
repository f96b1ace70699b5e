"""How many of a process's requests may hold a database connection for writes to one wallet.

A till write waits for its wallet's row lock on a pooled connection. A wallet's writes run one at a
time under that lock, so while a long write holds it, a burst of writes to the same wallet would
otherwise take every pooled connection of the process to wait there, and every other shop's calls
would wait for a connection in turn. The gate lets :data:`PLACES` requests per wallet hold a
connection; the others give theirs back to the pool and wait in memory for a place, in the order
they came, at most as long as a write waits for a row lock (``lock_timeout``), and are then refused
with 503 and ``Retry-After``, having written nothing (INPUT-21).

A wallet is known here by what the request names it with: the body's ``identifier`` (a purchase, a
redemption) or the request's path (an adjustment names its customer, a return its purchase). The
gate is per process and in memory: it bounds the connections each process lends a wallet, the row
lock still orders the writes.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Final

from loyalty_core.wallet.errors import WalletBusy
from loyalty_core.wallet.till_protocol import BUSY

PLACES: Final = 2
"""Requests per wallet that may hold a connection: the write under the lock and the next one,
ready to take it; more would only wait on the same row."""

WalletKey = tuple[int, str]
"""(vendor id, the identifier or path that names the wallet)."""


class _Places:
    __slots__ = ("free", "waiting")

    def __init__(self, free: int) -> None:
        self.free = free
        self.waiting: deque[asyncio.Future[None]] = deque()


class WalletGate:
    """One per app; single event loop, so nothing changes it between two awaits."""

    def __init__(self, *, wait_seconds: float, places: int = PLACES) -> None:
        self._wait, self._places = wait_seconds, places
        self._held: dict[WalletKey, _Places] = {}

    def try_enter(self, key: WalletKey) -> bool:
        """Take a place at once if one is free."""
        held = self._held.get(key)
        if held is None:
            self._held[key] = _Places(self._places - 1)
            return True
        if held.free:
            held.free -= 1
            return True
        return False

    async def enter(self, key: WalletKey) -> None:
        """Wait for a place (after :meth:`try_enter` found none); ``WalletBusy`` when none came in time."""
        waited = asyncio.get_running_loop().create_future()
        self._held[key].waiting.append(waited)
        try:
            async with asyncio.timeout(self._wait):
                await waited
        except BaseException as stopped:
            if waited.done() and not waited.cancelled():
                # the place came as the wait ended: it goes on to the next in line
                self.leave(key)
            if isinstance(stopped, TimeoutError):
                raise WalletBusy(BUSY, retry_after=1) from None
            raise

    def leave(self, key: WalletKey) -> None:
        """Give the place back: to the first still waiting, or free."""
        held = self._held[key]
        while held.waiting:
            waiter = held.waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        held.free += 1
        if held.free == self._places:
            del self._held[key]
