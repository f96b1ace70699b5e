"""Wire shapes of vouchers (back-office contract 2 "Rewards and vouchers", contract 5)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, UnsetType

from loyalty_core.tenancy.models import Branch
from loyalty_core.vouchers.models import Voucher, shown_status
from loyalty_http.rewards.schemas import Branches, BranchShown, Positive, Text


class VoucherCreate(msgspec.Struct, kw_only=True):
    customer_id: Positive
    discount_type: Literal["percentage", "fixed_amount"]
    discount_value: Positive
    description: Text | UnsetType | None = UNSET
    valid_until: date | UnsetType | None = UNSET
    branches: Branches | UnsetType | None = UNSET


class VoucherVerify(msgspec.Struct, kw_only=True):
    branch: Annotated[str, msgspec.Meta(max_length=64)] | UnsetType | None = UNSET


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
    def of(cls, v: Voucher, branches: list[Branch] | None, today: date) -> VoucherBody:
        return cls(
            code=v.code,
            customer_id=v.customer_id,
            description=v.description,
            valid_until=v.valid_until,
            branches=[BranchShown.from_model(b) for b in branches] if branches else None,
            discount_type=v.discount_type,
            discount_value=v.discount_value,
            status=shown_status(v, today),
            used_at=v.used_at,
        )
