"""Accepting a send-card (POST /customers/{customer}/send-card and its external-id form):
the refusals in order, the cooldown claimed by one conditional upsert, and the outbox row written in
the same transaction, so a rolled-back request sends nothing and an accepted one is never lost.

Delivery is the service's (a job after commit); this module only decides and records.
"""

from __future__ import annotations

import math
import uuid
from datetime import timedelta

from sqlalchemy import and_, exists, or_, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.accounts.views import CustomerReads
from loyalty_core.clock import Clock
from loyalty_core.customers import errors as ce
from loyalty_core.customers.models import CustomerStatus
from loyalty_core.customers.views import CustomerView
from loyalty_core.errors import ValidationFailed
from loyalty_core.passes.errors import CardSendThrottled, CustomerEmailSuppressed, CustomerHasNoEmail
from loyalty_core.passes.models import CardMail, CardSendCooldown, EmailSuppression, MailStatus, SuppressionRelease
from loyalty_core.text import mail_key

COOLDOWN = timedelta(seconds=60)
"""PASS-4: one card mail per customer per minute; both forms share it."""

_CD = CardSendCooldown.__table__.c
_S = EmailSuppression.__table__.c
_R = SuppressionRelease.__table__.c


def message_id_for(domain: str) -> str:
    """A Message-ID fixed at acceptance: every delivery attempt of this mail carries it (PASS-6)."""
    return f"<card-{uuid.uuid4().hex}@{domain}>"


class CardSends:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock
        self._customers = CustomerReads(session, clock)

    async def by_id(self, vendor_id: int, customer_id: int) -> CustomerView:
        """Anonymized customers are not found (the read model leaves them out)."""
        return await self._customers.get(vendor_id, customer_id)

    async def by_external_id(self, vendor_id: int, external_id: str) -> CustomerView:
        """A merged, closed account keeps its own external_id and is found, to be refused as
        deactivated (MERGE-6); anonymized ones are not found."""
        try:
            return await self._customers.lookup(vendor_id, external_id=external_id)
        except ce.CustomerNotFound:
            raise ce.ExternalIdNotFound(
                "No customer of the vendor has this external_id.", external_id=external_id
            ) from None

    async def accept(self, customer: CustomerView, *, message_domain: str) -> CardMail:
        """Refuse as PASS-4 and PASS-5 say, else start the cooldown and record the mail; nothing is written
        before the last refusal, and a refusal after the claim rolls back with the request."""
        if customer.status == CustomerStatus.DEACTIVATED:
            raise ce.CustomerDeactivated(
                "This customer is deactivated; no card is sent.",
                **({"merged_into_id": customer.merged_into_id} if customer.merged_into_id is not None else {}),
            )
        if not customer.email:
            raise CustomerHasNoEmail("The customer has no email address on file.")
        address = mail_key(customer.email)
        if await self._suppressed(customer.vendor_id, address):
            raise CustomerEmailSuppressed(
                "Mail to this address bounced or was marked as spam; no card is sent until sending is switched on."
            )
        if customer.loyalty_card_code is None:
            raise ValidationFailed(
                "The customer has no active loyalty card.",
                {"loyalty_card_code": ["The customer has no active loyalty card."]},
            )
        await self._claim_cooldown(customer.vendor_id, customer.id)
        now = self._clock.now()
        mail = CardMail(
            vendor_id=customer.vendor_id,
            customer_id=customer.id,
            to_address=customer.email,
            message_id=message_id_for(message_domain),
            status=MailStatus.QUEUED,
            attachments=[],
            attempts=0,
            accepted_at=now,
        )
        self._session.add(mail)
        await self._session.flush()
        return mail

    async def _suppressed(self, vendor_id: int, address: str) -> bool:
        """Suppressed at any shop (PASS-5), unless the admin switched it back on for this one."""
        released = exists().where(_R.vendor_id == vendor_id, _R.email == address)
        statement = select(exists().where(_S.email == address, ~released))
        return bool(await self._session.scalar(statement))

    async def _claim_cooldown(self, vendor_id: int, customer_id: int) -> None:
        """One statement claims the minute: a first send inserts, a send after the minute moves it
        on, any other send finds the row kept and is refused with the seconds left. A concurrent
        claim waits on the first one's row and re-reads it, so two racing sends get one 202.

        A cooldown that starts more than a minute after ``now`` (the test clock was moved back) counts
        as over. Only that far: racing requests read the clock in one order and reach the row in
        another, so a claim a few milliseconds "ahead" of a later request's now is a live one."""
        now = self._clock.now()
        claimed = await self._session.execute(
            insert(CardSendCooldown)
            .values(vendor_id=vendor_id, customer_id=customer_id, started_at=now)
            .on_conflict_do_update(
                constraint="uq_card_send_cooldowns_customer",
                set_={"started_at": now, "updated_at": now},
                where=or_(_CD.started_at <= now - COOLDOWN, _CD.started_at > now + COOLDOWN),
            )
            .returning(_CD.id)
        )
        if claimed.first() is not None:
            return
        started = await self._session.scalar(
            select(_CD.started_at).where(and_(_CD.vendor_id == vendor_id, _CD.customer_id == customer_id))
        )
        left = (started + COOLDOWN - now).total_seconds() if started is not None else COOLDOWN.total_seconds()
        retry_after = max(1, min(60, math.ceil(left)))
        raise CardSendThrottled(
            "A card was sent to this customer moments ago; try again shortly.", retry_after=retry_after
        )
