"""A voucher as the public API shows it (its status read against today's date): the answer of its
read and verify, and the ``voucher.used`` event's data."""

from __future__ import annotations

from datetime import date, datetime
from typing import Self

import msgspec

from loyalty_core.tenancy.models import Branch
from loyalty_core.tenancy.resources import BranchShown
from loyalty_core.vouchers.models import Voucher, shown_status


class VoucherBody(msgspec.Struct):
    code: str
    customer_id: int
    description: str | None
    valid_until: date | None
    branches: list[BranchShown] | None
    discount_type: str
    discount_value: int
    status: str
    used_at: datetime | None

    @classmethod
    def of(cls, v: Voucher, branches: list[Branch] | None, today: date) -> Self:
        return cls(
            code=v.code,
            customer_id=v.customer_id,
            description=v.description,
            valid_until=v.valid_until,
            branches=[BranchShown.of(b) for b in branches] if branches else None,
            discount_type=v.discount_type,
            discount_value=v.discount_value,
            status=shown_status(v, today),
            used_at=v.used_at,
        )
