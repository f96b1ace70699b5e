"""argon2id password hashes, computed in worker threads so the event loop keeps serving.

A hash costs tens of milliseconds of CPU on purpose; a small thread pool bounds how many run at
once, so a burst of sign-ins queues instead of starving every other request.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

MIN_LENGTH = 12


class Passwords:
    def __init__(self, *, concurrency: int = 2, hasher: PasswordHasher | None = None) -> None:
        self._hasher = hasher or PasswordHasher()  # argon2id with the library's current parameters
        self._pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="argon2")
        self._dummy: str | None = None

    async def hash(self, password: str) -> str:
        return await asyncio.get_running_loop().run_in_executor(self._pool, self._hasher.hash, password)

    async def verify(self, stored: str | None, password: str) -> bool:
        """Whether ``password`` matches ``stored``. With no stored hash (an unknown email) the same
        work is done against a dummy hash, so the answer's timing tells nothing."""
        if stored is None:
            if self._dummy is None:
                self._dummy = await self.hash("no user has this password, it only costs the same")
            stored = self._dummy
        return await asyncio.get_running_loop().run_in_executor(self._pool, self._check, stored, password)

    def _check(self, stored: str, password: str) -> bool:
        try:
            return self._hasher.verify(stored, password)
        except (VerificationError, InvalidHashError):
            return False


DEFAULT = Passwords()
"""The process's hasher: one bounded pool shared by every app and request of the process."""
