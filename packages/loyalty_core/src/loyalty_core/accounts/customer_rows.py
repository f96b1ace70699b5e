"""The customer read's rows: the customer, the balance it can spend at an instant and its
identifiers, for every read that shows a customer through the ORM (one customer, a search page,
a customer event's data).

The balance leaves out the points past their end that the nightly job has not expired yet
(LEDGER-9), as the till's lookup (``till_lookup``) and the wallet read do: what the portal and the
admin API show is what a till can spend.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Select, and_, cast, func, select

from loyalty_core.customers.models import Customer
from loyalty_core.customers.reads.customer import IDENTIFIER_LIST
from loyalty_core.wallet.models import Wallet, due_points

_C = Customer.__table__.c
_W = Wallet.__table__.c


def customer_rows(now: datetime) -> Select[Any]:
    """Every customer of every status with ``balance`` and ``identifier_list``: add the ``where``."""
    due = due_points(_W.vendor_id, _W.id, now).scalar_subquery()
    return (
        # a sum of bigint is numeric: cast back, or the balance would be read as a Decimal
        select(*_C, cast(func.coalesce(_W.balance, 0) - due, BigInteger).label("balance"), IDENTIFIER_LIST)
        .select_from(Customer.__table__)
        .outerjoin(Wallet.__table__, and_(_W.vendor_id == _C.vendor_id, _W.customer_id == _C.id))
    )
