"""Batches of free cards generated for printing (BATCH-1, BATCH-2).

A batch is recorded with who asked for it, and each of its cards carries the batch's id, so the
codes can be fetched again for a reprint, page by page, without holding a whole batch in memory.
The cards are free cards like any other (CUSTOMER-5): a till assigns one when it is scanned at a
registration.
"""

from __future__ import annotations

from advanced_alchemy.types import DateTimeUTC
from sqlalchemy import BigInteger, String, func, literal, select, true
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.bounds import MAX_BATCH as MAX_BATCH
from loyalty_core.clock import Clock
from loyalty_core.customers.errors import CardBatchNotFound
from loyalty_core.customers.models import CardBatch, CustomerIdentifier
from loyalty_core.customers.rules import cards
from loyalty_core.errors import ValidationFailed
from loyalty_core.listing import Paged, paged

PAGE = 1_000
"""Codes read per statement when a batch is read back."""


def check_count(count: int) -> None:
    if not 1 <= count <= MAX_BATCH:
        raise ValidationFailed(
            "The number of cards is out of range.", {"count": [f"A whole number from 1 to {MAX_BATCH:,}."]}
        )


class CardBatches:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def create(self, vendor_id: int, count: int, *, created_by: int | None) -> tuple[CardBatch, list[str]]:
        """BATCH-1: the batch and its ``count`` new free cards, in one transaction, and their codes."""
        check_count(count)
        at = self._clock.now()
        batch = CardBatch(vendor_id=vendor_id, count=count, created_by_user_id=created_by, created_at=at, updated_at=at)
        self._session.add(batch)
        await self._session.flush()
        now = literal(at, DateTimeUTC(timezone=True))
        codes: list[str] = []
        while len(codes) < count:
            drawn = func.unnest(literal(cards.new_codes(count - len(codes)), ARRAY(String))).column_valued("code")
            # one statement per draw; a code some card already has is skipped and drawn again
            added = await self._session.scalars(
                pg_insert(CustomerIdentifier)
                .from_select(
                    ["vendor_id", "type", "value", "active", "batch_id", "created_at", "updated_at"],
                    select(
                        literal(vendor_id),
                        literal(cards.LOYALTY_CARD),
                        drawn,
                        true(),
                        literal(batch.id, BigInteger),
                        now,
                        now,
                    ).distinct(),
                )
                .on_conflict_do_nothing()
                .returning(CustomerIdentifier.value)
            )
            codes.extend(added)
        return batch, codes

    async def recent(self, vendor_id: int, *, page: int) -> Paged[CardBatch]:
        """A page of the vendor's batches, newest first, with the capped count (PORTAL-18)."""
        condition = CardBatch.vendor_id == vendor_id
        statement = select(CardBatch).where(condition).order_by(CardBatch.id.desc())
        return await paged(
            self._session, statement, count=select(CardBatch.id).where(condition), page=page, entities=True
        )

    async def get(self, vendor_id: int, batch_id: int) -> CardBatch:
        found = await self._session.scalar(
            select(CardBatch).where(CardBatch.vendor_id == vendor_id, CardBatch.id == batch_id)
        )
        if found is None:
            raise CardBatchNotFound("The shop has no card batch with this id.", batch_id=batch_id)
        return found

    async def codes_after(
        self, vendor_id: int, batch_id: int, after: int = 0, *, limit: int = PAGE
    ) -> list[tuple[int, str]]:
        """BATCH-2: the next ``limit`` cards of the batch after the card id ``after``, as (id, code) in
        issue order. A card anonymized with its customer has left the batch with its row."""
        i = CustomerIdentifier
        rows = await self._session.execute(
            select(i.id, i.value)
            .where(i.vendor_id == vendor_id, i.batch_id == batch_id, i.id > after)
            .order_by(i.id)
            .limit(limit)
        )
        return [(card_id, code) for card_id, code in rows.all()]
