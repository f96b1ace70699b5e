"""The payload of ``transaction.returned``: the transaction with its new totals and the return under
the key ``return``. (``transaction.created`` stores a compact snapshot: ``created_event``.)"""

from __future__ import annotations

from typing import ClassVar

import msgspec

from loyalty_core.earning.resources import Return, Transaction
from loyalty_core.events.models import EventType


class TransactionReturned(Transaction, frozen=True):
    event_type: ClassVar[str] = EventType.TRANSACTION_RETURNED
    version: ClassVar[int] = 1
    return_: Return = msgspec.field(name="return")
    """Its ``id`` is drawn by the return's statement, which writes it into the stored JSON."""

    @classmethod
    def of_return(cls, transaction: Transaction, made: Return) -> TransactionReturned:
        return cls(**msgspec.structs.asdict(transaction), return_=made)
