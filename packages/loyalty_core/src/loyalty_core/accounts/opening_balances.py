"""Opening balances: the points a customer brings from the system an import replaces (CUSTOMER-14).

One ``adjust`` entry with reason ``opening_balance`` and causer ``import``, written by the same
adjustment as a till's or the portal's (so it opens one lot that ends by the vendor's expiry rule,
and whatever an adjustment records, an opening balance records too). Its idempotency key is the
same for every customer, and an adjustment's key is looked up in the customer's account: a
customer gets at most one opening balance, however often an import runs.
"""

from __future__ import annotations

import msgspec
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.customers.views import CustomerView
from loyalty_core.wallet.models import Causer, CauserType
from loyalty_core.wallet.services.adjustment import UNKNOWN, Adjustments, Unknown

REASON = "opening_balance"
KEY = "import:opening_balance"
IMPORTED = Causer(CauserType.IMPORT)
"""An import by the service's team (the admin API); the portal's names its user."""


class OpeningBalances:
    """The opening balances of one import run: the vendor's expiry term is read once."""

    def __init__(self, session: AsyncSession, clock: Clock, vendor_id: int, causer: Causer) -> None:
        self._adjustments = Adjustments(session, clock)
        self._vendor_id = vendor_id
        self._causer = Causer(CauserType.IMPORT, causer.id)
        self._expire_after_days: int | Unknown | None = UNKNOWN

    async def write(self, customer: CustomerView, points: int) -> CustomerView:
        """Credit ``points`` (above 0) to a customer the import just created; the customer as read
        again, with the balance."""
        if isinstance(self._expire_after_days, Unknown):
            self._expire_after_days = await self._adjustments.expiry_days(self._vendor_id)
        done = await self._adjustments.adjust(
            self._vendor_id,
            customer.id,
            amount=points,
            reason=REASON,
            key=KEY,
            causer=self._causer,
            expire_after_days=self._expire_after_days,
        )
        return msgspec.structs.replace(customer, balance=done.entry.running_balance)
