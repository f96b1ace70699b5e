"""The one-time keys of the portal's forms (PORTAL-21).

Each form a page renders carries a new key, minted from the session's CSRF token so that only that
session can send it, and stored nowhere until it is used. A state-changing request claims its key in
the request's one transaction, before its write: a new key is inserted, and the write that follows
commits or rolls back with it; a key used before answers what its first use did (where that
request sent the browser, and its message), and nothing is written again. Two submissions sent at
once meet on the unique key: the second insert waits for the first transaction and then finds its
row, or, when the first was refused and rolled back, takes the key itself.

Core's services flush and never commit (the request owns the transaction), so every write the
portal makes through them is in the claim's transaction without taking the key as an argument.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass

from sqlalchemy import delete, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.staff.models import PortalSession, UsedFormKey

MAX_LENGTH = 64
"""A key is 39 characters; a longer field is not one of ours and is not hashed."""
BATCH = 5000


def _mac(csrf_token: str, nonce: str) -> str:
    digest = hmac.new(csrf_token.encode(), nonce.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:16]).rstrip(b"=").decode()


def mint(csrf_token: str) -> str:
    """A new key for one form of the session whose CSRF token this is."""
    nonce = secrets.token_urlsafe(12)
    return f"{nonce}.{_mac(csrf_token, nonce)}"


def minted_for(csrf_token: str, key: str | None) -> bool:
    """Whether ``key`` was minted for this session (a key of another session, or none, is not)."""
    if not key or len(key) > MAX_LENGTH:
        return False
    nonce, _, mac = key.partition(".")
    return bool(nonce) and hmac.compare_digest(mac.encode(), _mac(csrf_token, nonce).encode())


@dataclass(frozen=True, slots=True)
class First:
    """What the first use of a key did: where it sent the browser (None while that request has not
    answered yet) and the message it showed there."""

    location: str | None
    flash: str | None


class FormKeys:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def claim(self, vendor_id: int, session_id: int, key: str) -> int | First:
        """The claim's id when the key is new to the session; what its first use did otherwise."""
        now = self._clock.now()
        claimed: int | None = await self._session.scalar(
            insert(UsedFormKey)
            .values(vendor_id=vendor_id, session_id=session_id, form_key=key, created_at=now, updated_at=now)
            .on_conflict_do_nothing(constraint="uq_used_form_keys_vendor_session_key")
            .returning(UsedFormKey.id)
        )
        if claimed is not None:
            return claimed
        first = (
            await self._session.execute(
                select(UsedFormKey.location, UsedFormKey.flash).where(
                    UsedFormKey.vendor_id == vendor_id,
                    UsedFormKey.session_id == session_id,
                    UsedFormKey.form_key == key,
                )
            )
        ).one()
        return First(first.location, first.flash)

    async def settle(self, vendor_id: int, claim: int, location: str, flash: str | None) -> None:
        """The claimed key's write is done: where a second submission is sent, and what it is told."""
        await self._session.execute(
            update(UsedFormKey)
            .where(UsedFormKey.vendor_id == vendor_id, UsedFormKey.id == claim)
            .values(location=location, flash=flash, updated_at=self._clock.now())
        )

    async def release(self, vendor_id: int, claim: int) -> None:
        """The write was refused and changed nothing: the key may be sent again."""
        await self._session.execute(
            delete(UsedFormKey).where(UsedFormKey.vendor_id == vendor_id, UsedFormKey.id == claim)
        )

    async def show(self, session_id: int, flash: str | None) -> None:
        """``flash`` is shown once, by the session's next page."""
        if flash is not None:
            await self._session.execute(update(PortalSession).where(PortalSession.id == session_id).values(flash=flash))


async def prune_ended_sessions(session: AsyncSession) -> int:
    """Delete one batch of the keys of sessions that ended: a key is only ever accepted with its own
    session, so these can never be sent again. Answers how many went."""
    ended = (
        select(UsedFormKey.id)
        .where(~select(PortalSession.id).where(PortalSession.id == UsedFormKey.session_id).exists())
        .limit(BATCH)
        .scalar_subquery()
    )
    result = await session.execute(delete(UsedFormKey).where(UsedFormKey.id.in_(ended)))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]
