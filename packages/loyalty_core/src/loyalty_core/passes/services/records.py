"""``PassRecords``: a customer's one pass as a row (PASS-9). Made by the first download or save
link, it keeps what the pass showed then (a fingerprint), when that last changed and its change
tag; each later build, fetch or job run that finds other content moves both on (PASS-12, PASS-13).
"""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.passes.models import PASS_CHANGES, PassRegistration, WalletPass
from loyalty_core.passes.rules import fingerprint, later_tag, serial_of, token_hash
from loyalty_core.passes.services.ports import CardFacts

_P = WalletPass.__table__.c
_R = PassRegistration.__table__.c


class PassRecords:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def keep(
        self,
        card: CardFacts,
        *,
        pass_type_identifier: str | None = None,
        token: str | None = None,
        object_id: str | None = None,
    ) -> WalletPass:
        """The customer's pass row, made if missing and brought up to ``card``; a platform_a
        download names its pass type and token, a save link its platform_b object."""
        now = self._clock.now()
        shown = fingerprint(card)
        await self._session.execute(
            insert(WalletPass)
            .values(
                vendor_id=card.vendor_id,
                customer_id=card.customer_id,
                serial=serial_of(card.vendor_id, card.customer_id),
                fingerprint=shown,
                changed_at=now,
                change_tag=PASS_CHANGES.next_value(),
                object_attempts=0,
            )
            .on_conflict_do_nothing(index_elements=["vendor_id", "customer_id"])
        )
        row = await self.locked(card.vendor_id, card.customer_id)
        assert row is not None  # inserted or already there, under this transaction's lock
        await self.refresh(row, card)
        if pass_type_identifier is not None and row.pass_type_identifier != pass_type_identifier:
            row.pass_type_identifier = pass_type_identifier
        if token is not None:
            stored = token_hash(token)
            if row.token_hash != stored:
                row.token_hash = stored
        if object_id is not None and row.object_id != object_id:
            # the save link carries what the pass shows now
            row.object_id, row.object_fingerprint = object_id, row.fingerprint
        await self._session.flush()
        return row

    async def locked(self, vendor_id: int, customer_id: int) -> WalletPass | None:
        return (
            await self._session.execute(
                select(WalletPass)
                .where(_P.vendor_id == vendor_id, _P.customer_id == customer_id)
                .with_for_update()
                .execution_options(populate_existing=True)
            )
        ).scalar_one_or_none()

    async def refresh(self, row: WalletPass, card: CardFacts, *, flush: bool = True) -> bool:
        """Move the pass on when what it shows differs from what it last showed; True if it did.
        ``flush=False``: the caller flushes (a batch, once at its end)."""
        shown = fingerprint(card)
        if shown == row.fingerprint:
            return False
        row.fingerprint = shown
        row.changed_at = later_tag(row.changed_at, self._clock.now())
        row.change_tag = (await self._session.execute(select(PASS_CHANGES.next_value()))).scalar_one()
        if flush:
            await self._session.flush()
        return True

    async def forget(self, vendor_id: int, customer_id: int) -> None:
        """Anonymization (PASS-17): the customer's registrations and pass go; the pass answers 404."""
        passes = select(_P.id).where(_P.vendor_id == vendor_id, _P.customer_id == customer_id)
        await self._session.execute(delete(PassRegistration).where(_R.vendor_id == vendor_id, _R.pass_id.in_(passes)))
        await self._session.execute(delete(WalletPass).where(_P.vendor_id == vendor_id, _P.customer_id == customer_id))
