"""Wire structs of the wallet and ledger endpoints (spec: Resources > Wallet, Ledger entry) and of
the admin merge of two accounts."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from loyalty_core.wallet.ledger_writes import EntryRow
from loyalty_core.wallet.models import EntryType
from loyalty_core.wallet.models import LedgerEntry as LedgerEntryModel
from loyalty_core.wallet.services import WalletView
from loyalty_http.customers.schemas import Customer
from loyalty_http.wire.pagination import DEFAULT_PER_PAGE, PerPage

DateOrInstant = Annotated[str, msgspec.Meta(extra={"rule": "datetime_or_date"})]


class WalletAdjust(msgspec.Struct):
    amount: int
    reason: Annotated[str, msgspec.Meta(max_length=500)]
    idempotency_key: Annotated[str, msgspec.Meta(max_length=255)]

    def check(self) -> Mapping[str, list[str]]:
        if self.amount == 0:
            return {"amount": ["The amount must not be zero."]}
        return {}


class LedgerQuery(msgspec.Struct):
    date_from: DateOrInstant | UnsetType = UNSET
    date_to: DateOrInstant | UnsetType = UNSET
    type: EntryType | UnsetType = UNSET
    per_page: PerPage = DEFAULT_PER_PAGE


class Wallet(msgspec.Struct):
    id: int
    customer_id: int
    balance: int
    expiring_soon: int
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_view(cls, view: WalletView) -> Wallet:
        w = view.wallet
        return cls(
            id=w.id,
            customer_id=w.customer_id,
            balance=w.balance,
            expiring_soon=view.expiring_soon,
            created_at=w.created_at,
            updated_at=w.updated_at,
        )


class LedgerEntry(msgspec.Struct):
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
    def from_model(cls, e: LedgerEntryModel | EntryRow) -> LedgerEntry:
        return msgspec.convert(e, cls, from_attributes=True)


class MergeBody(msgspec.Struct):
    into_customer_id: Annotated[int, msgspec.Meta(ge=1)]


class Merged(msgspec.Struct):
    kept: Customer
    closed: Customer
