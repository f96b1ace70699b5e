"""What a customer's pass and card mail are built from: the customer read with its balance, the
shop's branding (or its generated default), and the refusals both endpoints answer."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.accounts.reads.customer import CustomerReads
from loyalty_core.clock import Clock
from loyalty_core.customers.errors import CustomerDeactivated
from loyalty_core.customers.reads.customer import CustomerView
from loyalty_core.errors import ValidationFailed
from loyalty_core.passes.models import PassBrandingRow
from loyalty_core.passes.services.ports import BrandingFacts, CardFacts
from loyalty_core.tenancy.models import Vendor
from loyalty_core.tiers.till_months import standing_from_read, tier_facts_of

_B = PassBrandingRow.__table__.c
BRANDING_FIELDS = ("display_name", "background", "foreground", "label", "logo_png", "icon_png")


class PassCards:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock
        self._customers = CustomerReads(session, clock)

    async def branding(self, vendor_id: int) -> BrandingFacts:
        vendor = await self._session.get_one(Vendor, vendor_id)
        row = (
            await self._session.execute(select(PassBrandingRow).where(_B.vendor_id == vendor_id))
        ).scalar_one_or_none()
        if row is None:
            return BrandingFacts(vendor.name, "#ffffff", "#1d1d1f", "#636366", None, None)
        return BrandingFacts(
            row.display_name or vendor.name, row.background, row.foreground, row.label, row.logo_png, row.icon_png
        )

    async def set_branding(self, vendor_id: int, fields: dict[str, Any]) -> BrandingFacts:
        values = {k: v for k, v in fields.items() if k in BRANDING_FIELDS}
        statement = insert(PassBrandingRow).values(vendor_id=vendor_id, **values)
        if values:
            statement = statement.on_conflict_do_update(index_elements=["vendor_id"], set_=values)
        else:
            statement = statement.on_conflict_do_nothing(index_elements=["vendor_id"])
        await self._session.execute(statement)
        return await self.branding(vendor_id)

    async def for_pass(self, vendor_id: int, customer_id: int) -> tuple[CustomerView, CardFacts]:
        """The customer and its card facts. Anonymized: CUSTOMER_NOT_FOUND; merged and closed:
        CUSTOMER_DEACTIVATED; no active card: 422 on ``loyalty_card_code`` (MERGE-6)."""
        customer = await self._customers.get(vendor_id, customer_id)
        return customer, await self.facts_of(customer)

    async def facts_of(self, customer: CustomerView, branding: BrandingFacts | None = None) -> CardFacts:
        """The card facts of a customer read; ``branding``: the shop's, when the caller read it already."""
        if customer.merged_into_id is not None:
            raise CustomerDeactivated(
                "This customer was merged into another; use the account that stays.",
                merged_into_id=customer.merged_into_id,
            )
        if customer.loyalty_card_code is None:
            raise ValidationFailed(
                "The customer has no active loyalty card.",
                {"loyalty_card_code": ["The customer has no active loyalty card."]},
            )
        holder = " ".join(p for p in (customer.first_name, customer.last_name) if p)
        return CardFacts(
            vendor_id=customer.vendor_id,
            customer_id=customer.id,
            card_code=customer.loyalty_card_code,
            holder_name=holder,
            balance=customer.balance,
            locale=customer.locale,
            branding=branding if branding is not None else await self.branding(customer.vendor_id),
            tier_name=await self._tier_name(customer.vendor_id, customer.id),
        )

    async def _tier_name(self, vendor_id: int, customer_id: int) -> str | None:
        """TIER-13: the name of the tier the customer's family holds now, or None."""
        now = self._clock.now()
        standing = standing_from_read(await tier_facts_of(self._session, vendor_id, customer_id, now), now)
        return standing.rung.name if standing is not None else None
