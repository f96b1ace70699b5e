"""A shop's platform_a identity as rows: who may ask the platform now, and what its answers leave.

The asking itself is the service's (it holds the platform); this module decides when asking is due
and records the answer, so "at most once a minute per shop while busy" holds across processes: the
ask is claimed by one conditional UPDATE, and a second request in the same minute loses the claim.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, or_, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.passes.errors import PlatformAWalletUnavailable
from loyalty_core.passes.models import IdentityState, WalletIdentity
from loyalty_core.tenancy.models import Vendor

ASK_INTERVAL = timedelta(seconds=60)
"""While the platform is busy, the service asks again at most this often per shop (PASS-3)."""
REFUSED_RETRY_AFTER_SECONDS = 3600
"""What ``Retry-After`` says after a refusal: nothing changes until the team has fixed the cause."""

_T = WalletIdentity.__table__.c


class IdentityRows:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session = session
        self._clock = clock

    async def get(self, vendor_id: int) -> WalletIdentity | None:
        return (
            await self._session.execute(select(WalletIdentity).where(_T.vendor_id == vendor_id))
        ).scalar_one_or_none()

    async def open(self, vendor_id: int) -> None:
        """The shop's row in state pending, if it has none yet (at creation, at start-up)."""
        await self._session.execute(
            insert(WalletIdentity)
            .values(vendor_id=vendor_id, state=IdentityState.PENDING, version=0)
            .on_conflict_do_nothing(index_elements=["vendor_id"])
        )

    async def claim_ask(self, vendor_id: int, *, force: bool = False, reset: bool = False) -> bool:
        """True when this caller should ask the platform now. A pending or busy shop whose minute is
        over is claimed by moving its next ask a minute on; ``force`` (the admin's retry, test mode)
        claims a refused or busy shop at once; ``reset`` (test mode scripting the stand-in) claims even
        an issued one, so the stand-in's scripted answer becomes the shop's state."""
        now = self._clock.now()
        due: ColumnElement[bool] = _T.state.in_([IdentityState.PENDING, IdentityState.BUSY]) & or_(
            _T.next_ask_at.is_(None), _T.next_ask_at <= now
        )
        if force:
            due = _T.state != IdentityState.ISSUED
        if reset:
            due = _T.vendor_id == vendor_id
        claimed = await self._session.execute(
            update(WalletIdentity)
            .where(_T.vendor_id == vendor_id, due)
            .values(next_ask_at=now + ASK_INTERVAL)
            .returning(_T.id)
        )
        return claimed.first() is not None

    async def record_issued(
        self, vendor_id: int, *, certificate: bytes, intermediate: bytes, sealed_key: bytes
    ) -> None:
        await self._session.execute(
            update(WalletIdentity)
            .where(_T.vendor_id == vendor_id)
            .values(
                state=IdentityState.ISSUED,
                certificate_pem=certificate,
                intermediate_pem=intermediate,
                sealed_key=sealed_key,
                next_ask_at=None,
                reason=None,
                version=_T.version + 1,
            )
        )

    async def record_busy(self, vendor_id: int, retry_after_seconds: int) -> None:
        wait = min(timedelta(seconds=max(1, retry_after_seconds)), ASK_INTERVAL)
        await self._session.execute(
            update(WalletIdentity)
            .where(_T.vendor_id == vendor_id)
            .values(state=IdentityState.BUSY, next_ask_at=self._clock.now() + wait)
        )

    async def record_refused(self, vendor_id: int, reason: str) -> None:
        await self._session.execute(
            update(WalletIdentity)
            .where(_T.vendor_id == vendor_id)
            .values(state=IdentityState.REFUSED, next_ask_at=None, reason=reason)
        )

    async def vendors_without_identity(self) -> list[int]:
        """Shops that existed before identities were kept, or whose ask never finished."""
        rows = await self._session.scalars(
            select(Vendor.__table__.c.id)
            .outerjoin(WalletIdentity.__table__, _T.vendor_id == Vendor.__table__.c.id)
            .where(or_(_T.id.is_(None), _T.state == IdentityState.PENDING))
        )
        return list(rows)


def unavailable(row: WalletIdentity | None, now: datetime) -> PlatformAWalletUnavailable:
    """The 503 for a shop without an identity, with the seconds until the service asks again."""
    if row is not None and row.state == IdentityState.REFUSED:
        retry_after = REFUSED_RETRY_AFTER_SECONDS
    elif row is not None and row.next_ask_at is not None:
        retry_after = max(1, min(60, math.ceil((row.next_ask_at - now).total_seconds())))
    else:
        retry_after = 60
    return PlatformAWalletUnavailable(
        "This shop cannot sign platform_a passes yet; platform_b is not affected.", retry_after=retry_after
    )
