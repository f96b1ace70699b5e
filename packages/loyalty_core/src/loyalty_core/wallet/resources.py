"""The wallet and its ledger entries as the public API shows them."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

import msgspec

from loyalty_core.wallet.models import LedgerEntry as LedgerEntryModel

if TYPE_CHECKING:
    # the services write entries of this module's shape: imported for the annotation alone
    from loyalty_core.wallet.services import WalletView


class Wallet(msgspec.Struct):
    id: int
    customer_id: int
    balance: int
    expiring_soon: int
    pending_points: int
    next_available_at: datetime | None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, view: WalletView) -> Wallet:
        w = view.wallet
        return cls(
            id=w.id,
            customer_id=w.customer_id,
            balance=view.balance,
            expiring_soon=view.expiring_soon,
            pending_points=view.pending_points,
            next_available_at=view.next_available_at,
            created_at=w.created_at,
            updated_at=w.updated_at,
        )


class LedgerEntry(msgspec.Struct):
    # one shape for an entry a write returns and the one the API shows
    id: int
    wallet_id: int
    type: str
    amount: int
    running_balance: int
    reason: str | None
    causer_type: str
    causer_id: str | None
    created_at: datetime

    @classmethod
    def of(cls, e: LedgerEntryModel) -> LedgerEntry:
        return msgspec.convert(e, cls, from_attributes=True)
