"""What the customer writes are given by the area above them (``loyalty_core.accounts``): the customer
read that shows the balance, and the recorder of the ``customer.*`` events. The customers area knows
neither the wallet nor the events area, so each write holds these as parts and calls them at the
place of its change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from loyalty_core.customers.views import CustomerView


class CustomerRead(Protocol):
    """The customer as the API shows it, with its balance; anonymized customers are not found."""

    async def get(self, vendor_id: int, customer_id: int) -> CustomerView: ...

    async def lookup(
        self, vendor_id: int, *, identifier: str | None = None, external_id: str | None = None
    ) -> CustomerView: ...


class CustomerChanges(Protocol):
    """Records a customer's change as an event in the change's own transaction."""

    async def created(self, views: Sequence[CustomerView]) -> None:
        """``customer.created`` for each customer a registration or an import made."""

    async def updated(self, before: CustomerView, after: CustomerView) -> None:
        """``customer.updated``, only when the customer as the API shows it changed."""

    async def anonymized(self, vendor_id: int, customer_id: int) -> None:
        """``customer.anonymized``, and the customer's personal data leaves its stored events."""
