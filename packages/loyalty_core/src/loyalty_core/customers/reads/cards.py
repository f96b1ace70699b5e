"""The admin list of a vendor's loyalty cards: free (printed, held by nobody), assigned, or blocked."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.customers.models import CustomerIdentifier
from loyalty_core.customers.rules import cards
from loyalty_core.listing import Listed, rows_of


class CardState(StrEnum):
    FREE = "free"
    ASSIGNED = "assigned"
    BLOCKED = "blocked"


@dataclass(frozen=True, slots=True)
class CardListed:
    code: str
    status: CardState
    customer_id: int | None


def state_of(active: bool, customer_id: int | None) -> CardState:
    """A blocked card reads blocked whoever holds it; otherwise held or not."""
    if not active:
        return CardState.BLOCKED
    return CardState.FREE if customer_id is None else CardState.ASSIGNED


class CardList:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def cards(self, vendor_id: int, *, status: CardState | None, page: int, per_page: int) -> Listed[CardListed]:
        i = CustomerIdentifier
        statement = (
            select(i.value, i.active, i.customer_id)
            .where(i.vendor_id == vendor_id, i.type == cards.LOYALTY_CARD)
            .order_by(i.id)
        )
        if status == CardState.BLOCKED:
            statement = statement.where(i.active.is_(False))
        elif status == CardState.FREE:
            statement = statement.where(i.active.is_(True), i.customer_id.is_(None))
        elif status == CardState.ASSIGNED:
            statement = statement.where(i.active.is_(True), i.customer_id.isnot(None))
        listed = await rows_of(self._session, statement, page=page, per_page=per_page)
        return Listed(
            [CardListed(code, state_of(active, customer), customer) for code, active, customer in listed.items],
            listed.total,
        )
