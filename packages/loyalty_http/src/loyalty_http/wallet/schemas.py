"""Wire structs of the wallet and ledger endpoints and of
the admin merge of two accounts. The response shapes, ``Wallet`` and ``LedgerEntry``, are the core's
(``loyalty_core.wallet.resources``), re-exported here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from loyalty_core import bounds
from loyalty_core.wallet.models import EntryType
from loyalty_core.wallet.resources import LedgerEntry as LedgerEntry
from loyalty_core.wallet.resources import Wallet as Wallet
from loyalty_http.customers.schemas import Customer
from loyalty_http.wire.pagination import DEFAULT_PER_PAGE, PerPage

DateOrInstant = Annotated[str, msgspec.Meta(extra={"rule": "datetime_or_date"})]


class WalletAdjust(msgspec.Struct):
    amount: int
    reason: Annotated[str, bounds.ADJUST_REASON]
    idempotency_key: Annotated[str, bounds.ADJUST_KEY]

    def check(self) -> Mapping[str, list[str]]:
        if self.amount == 0:
            return {"amount": ["The amount must not be zero."]}
        return {}


class LedgerQuery(msgspec.Struct):
    date_from: DateOrInstant | UnsetType = UNSET
    date_to: DateOrInstant | UnsetType = UNSET
    type: EntryType | UnsetType = UNSET
    per_page: PerPage = DEFAULT_PER_PAGE


class MergeBody(msgspec.Struct):
    into_customer_id: Annotated[int, msgspec.Meta(ge=1)]


class Merged(msgspec.Struct):
    kept: Customer
    closed: Customer
