"""Wire shapes of vouchers (VOUCHER-1 to VOUCHER-3): the request
bodies here; the response shape, ``VoucherBody``, is the core's (``loyalty_core.vouchers.resources``),
re-exported here."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, UnsetType

from loyalty_core.vouchers.resources import VoucherBody as VoucherBody
from loyalty_http.rewards.schemas import Branches, Positive, Text


class VoucherCreate(msgspec.Struct, kw_only=True):
    customer_id: Positive
    discount_type: Literal["percentage", "fixed_amount"]
    discount_value: Positive
    description: Text | UnsetType | None = UNSET
    valid_until: date | UnsetType | None = UNSET
    branches: Branches | UnsetType | None = UNSET


class VoucherVerify(msgspec.Struct, kw_only=True):
    branch: Annotated[str, msgspec.Meta(max_length=64)] | UnsetType | None = UNSET
