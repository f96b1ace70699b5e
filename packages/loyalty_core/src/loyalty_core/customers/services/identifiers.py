"""Identifiers and loyalty cards: add, claim, issue, bring from an import, block and unblock.

CUSTOMER-2 to CUSTOMER-7: identifiers, batches of pre-printed cards, the cards of a customer.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from loyalty_core.customers import cards
from loyalty_core.customers import errors as e
from loyalty_core.customers.card_batches import CardBatches
from loyalty_core.customers.models import CustomerIdentifier, CustomerStatus
from loyalty_core.customers.profiles import IdentifierInput
from loyalty_core.customers.services.base import CustomerWrites
from loyalty_core.customers.views import CardView, CustomerView
from loyalty_core.errors import ValidationFailed

ISSUE_ATTEMPTS = 8
"""A fresh random code collides with an existing one about once in millions of issues; retrying a
few times makes a failure practically impossible without hiding a broken generator."""


class IdentifierWrites(CustomerWrites):
    async def _add_identifier(self, vendor_id: int, customer_id: int, type_: str, value: str, at: datetime) -> None:
        added = await self._session.scalar(
            pg_insert(CustomerIdentifier)
            .values(
                vendor_id=vendor_id,
                customer_id=customer_id,
                type=type_,
                value=cards.normalise_value(type_, value),
                active=True,
                assigned_at=at,
                created_at=at,
                updated_at=at,
            )
            .on_conflict_do_nothing()
            .returning(CustomerIdentifier.id)
        )
        if added is None:
            raise e.IdentifierDuplicate(f"The {type_} identifier is already registered for the vendor.")

    async def _check_free_card(self, vendor_id: int, code: str) -> None:
        row = (
            await self._session.execute(
                select(CustomerIdentifier.type, CustomerIdentifier.active, CustomerIdentifier.customer_id).where(
                    CustomerIdentifier.vendor_id == vendor_id,
                    func.lower(CustomerIdentifier.value) == func.lower(code),
                )
            )
        ).first()
        if row is None or row.type != cards.LOYALTY_CARD or not row.active or row.customer_id is not None:
            raise e.LoyaltyCardNotFound(
                "The loyalty card is not a free card of the vendor (unknown, blocked or already assigned); "
                "rescan, or send no identifiers so a card is issued."
            )

    async def _claim(self, vendor_id: int, code: str, customer_id: int, at: datetime) -> None:
        """Take a free card; the conditional update decides a race for it in the database."""
        if not await self._try_claim(vendor_id, code, customer_id, at):
            raise e.IdentifierDuplicate("The scanned card was claimed by another customer first.")

    async def _try_claim(self, vendor_id: int, code: str, customer_id: int, at: datetime) -> bool:
        """Assign the card if it is free and active; answers whether it was."""
        claimed = await self._session.scalar(
            update(CustomerIdentifier)
            .where(
                CustomerIdentifier.vendor_id == vendor_id,
                func.lower(CustomerIdentifier.value) == func.lower(code),
                CustomerIdentifier.type == cards.LOYALTY_CARD,
                CustomerIdentifier.customer_id.is_(None),
                CustomerIdentifier.active.is_(True),
            )
            .values(customer_id=customer_id, assigned_at=at, updated_at=at)
            .returning(CustomerIdentifier.id)
            .execution_options(synchronize_session=False)
        )
        return claimed is not None

    async def _issue(self, vendor_id: int, customer_id: int | None, at: datetime) -> str:
        for _ in range(ISSUE_ATTEMPTS):
            code = cards.new_code()
            added = await self._session.scalar(
                pg_insert(CustomerIdentifier)
                .values(
                    vendor_id=vendor_id,
                    customer_id=customer_id,
                    type=cards.LOYALTY_CARD,
                    value=code,
                    active=True,
                    assigned_at=at if customer_id is not None else None,
                    created_at=at,
                    updated_at=at,
                )
                .on_conflict_do_nothing()
                .returning(CustomerIdentifier.id)
            )
            if added is not None:
                return code
        raise RuntimeError("could not find a free loyalty card code")

    async def _bring(self, vendor_id: int, customer_id: int, brought: IdentifierInput, at: datetime) -> None:
        """An imported identifier: a free card of the vendor is claimed, an unknown card or retired
        value is created; anything held already is a duplicate."""
        if brought.type == cards.LOYALTY_CARD and await self._try_claim(
            vendor_id, cards.normalise_code(brought.value), customer_id, at
        ):
            return
        await self._add_identifier(vendor_id, customer_id, brought.type, brought.value, at)

    async def issue_card_batch(self, vendor_id: int, count: int) -> list[str]:
        """CUSTOMER-5: free pre-printed cards, held by nobody until scanned at a registration; recorded
        as a batch of the operator (BATCH-1)."""
        _, codes = await CardBatches(self._session, self._clock).create(vendor_id, count, created_by=None)
        return codes

    async def add_card(self, vendor_id: int, customer_id: int, code: str | None) -> CustomerView:
        """CUSTOMER-4: a further card, free pre-printed or issued; it becomes the card scanned."""
        customer = await self._customer_for_update(vendor_id, customer_id)
        if customer.status == CustomerStatus.DEACTIVATED:
            raise e.CustomerDeactivated("The customer is deactivated, so no card is added.")
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
            await self._issue(vendor_id, customer_id, at)
        else:
            code = cards.normalise_code(code)
            await self._check_free_card(vendor_id, code)
            await self._claim(vendor_id, code, customer_id, at)
        customer.updated_at = self._clock.now()
        await self._session.flush()
        return await self.get(vendor_id, customer_id)

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
        card.active = active
        card.updated_at = self._clock.now()
        await self._session.flush()
        return CardView(code=card.value, active=card.active, customer_id=card.customer_id, assigned_at=card.assigned_at)

    async def set_identifier_active(self, vendor_id: int, customer_id: int, value: str, active: bool) -> CustomerView:
        """CUSTOMER-7: block or unblock one of the customer's identifiers; the email one follows the profile."""
        await self._customer_for_update(vendor_id, customer_id)
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
        return await self.get(vendor_id, customer_id)
