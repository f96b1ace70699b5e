"""Identifiers and loyalty cards: a batch of free cards, a further card, block and unblock.

CUSTOMER-2 to CUSTOMER-7: identifiers, batches of pre-printed cards, the cards of a customer. Each
write that changes a customer records ``customer.updated`` where it changes it.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.customers import cards
from loyalty_core.customers import errors as e
from loyalty_core.customers.card_batches import CardBatches
from loyalty_core.customers.models import CustomerIdentifier, CustomerStatus
from loyalty_core.customers.services import identifier_rows
from loyalty_core.customers.services.ports import CustomerChanges, CustomerRead
from loyalty_core.customers.services.rows import locked_customer
from loyalty_core.customers.views import CardView, CustomerView
from loyalty_core.errors import ValidationFailed


class IdentifierWrites:
    def __init__(self, session: AsyncSession, clock: Clock, reads: CustomerRead, changes: CustomerChanges) -> None:
        self._session, self._clock = session, clock
        self._reads, self._changes = reads, changes

    async def issue_card_batch(self, vendor_id: int, count: int) -> list[str]:
        """CUSTOMER-5: free pre-printed cards, held by nobody until scanned at a registration; recorded
        as a batch of the operator (BATCH-1)."""
        _, codes = await CardBatches(self._session, self._clock).create(vendor_id, count, created_by=None)
        return codes

    async def add_card(self, vendor_id: int, customer_id: int, code: str | None) -> CustomerView:
        """CUSTOMER-4: a further card, free pre-printed or issued; it becomes the card scanned."""
        customer = await locked_customer(self._session, vendor_id, customer_id)
        if customer.status == CustomerStatus.DEACTIVATED:
            raise e.CustomerDeactivated("The customer is deactivated, so no card is added.")
        before = await self._reads.get(vendor_id, customer_id)
        held, last = (
            await self._session.execute(
                select(func.count(), func.max(CustomerIdentifier.assigned_at)).where(
                    CustomerIdentifier.vendor_id == vendor_id,
                    CustomerIdentifier.customer_id == customer_id,
                    CustomerIdentifier.type == cards.LOYALTY_CARD,
                )
            )
        ).one()
        if held >= cards.MAX_CARDS_PER_CUSTOMER:
            raise ValidationFailed(
                "The customer holds the most cards allowed.",
                {"code": [f"A customer may hold at most {cards.MAX_CARDS_PER_CUSTOMER} loyalty cards."]},
            )
        # strictly after the card held so far, so the new card is the one scanned even on a frozen clock
        at = self._clock.now()
        if last is not None and last >= at:
            at = last + timedelta(microseconds=1)
        if code is None:
            await identifier_rows.issue(self._session, vendor_id, customer_id, at)
        else:
            code = cards.normalise_code(code)
            await identifier_rows.check_free_card(self._session, vendor_id, code)
            await identifier_rows.claim(self._session, vendor_id, code, customer_id, at)
        customer.updated_at = self._clock.now()
        await self._session.flush()
        after = await self._reads.get(vendor_id, customer_id)
        await self._changes.updated(before, after)
        return after

    async def set_card_active(self, vendor_id: int, code: str, active: bool) -> CardView:
        """CUSTOMER-3: block or unblock any card of the vendor, free or assigned."""
        card = await self._session.scalar(
            select(CustomerIdentifier).where(
                CustomerIdentifier.vendor_id == vendor_id,
                func.lower(CustomerIdentifier.value) == func.lower(code),
                CustomerIdentifier.type == cards.LOYALTY_CARD,
            )
        )
        if card is None:
            raise e.AdminCardNotFound("The vendor has no loyalty card with this code.", resource="card", code=code)
        before = None if card.customer_id is None else await self._reads.get(vendor_id, card.customer_id)
        card.active = active
        card.updated_at = self._clock.now()
        await self._session.flush()
        if before is not None:
            await self._changes.updated(before, await self._reads.get(vendor_id, before.id))
        return CardView(code=card.value, active=card.active, customer_id=card.customer_id, assigned_at=card.assigned_at)

    async def set_identifier_active(self, vendor_id: int, customer_id: int, value: str, active: bool) -> CustomerView:
        """CUSTOMER-7: block or unblock one of the customer's identifiers; the email one follows the profile."""
        await locked_customer(self._session, vendor_id, customer_id)
        before = await self._reads.get(vendor_id, customer_id)
        identifier = await self._session.scalar(
            select(CustomerIdentifier).where(
                CustomerIdentifier.vendor_id == vendor_id,
                CustomerIdentifier.customer_id == customer_id,
                func.lower(CustomerIdentifier.value) == func.lower(value),
            )
        )
        if identifier is None:
            raise e.AdminIdentifierNotFound(
                "The customer holds no identifier with this value.", resource="identifier", value=value
            )
        if identifier.type == cards.EMAIL:
            raise ValidationFailed(
                "The email identifier cannot be changed on its own.",
                {"active": ["The email identifier follows the profile email and cannot be deactivated on its own."]},
            )
        identifier.active = active
        identifier.updated_at = self._clock.now()
        await self._session.flush()
        after = await self._reads.get(vendor_id, customer_id)
        await self._changes.updated(before, after)
        return after
