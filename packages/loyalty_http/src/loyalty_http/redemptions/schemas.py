"""Wire shapes of redemptions (REDEEM-1 to REDEEM-3): the
request body here; the response shape, ``RedemptionBody``, is the core's
(``loyalty_core.redemptions.resources``), re-exported here."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from loyalty_core.redemptions.resources import RedemptionBody as RedemptionBody


class RedeemBody(msgspec.Struct, kw_only=True):
    """POST /redemptions. Other fields a client sends (points, status, code...) are ignored (INPUT-17)."""

    identifier: Annotated[str, msgspec.Meta(min_length=1, max_length=255)]
    reward_id: Annotated[int, msgspec.Meta(ge=1, le=2**63 - 1)]
    idempotency_key: Annotated[str, msgspec.Meta(min_length=1, max_length=255)]
    branch: Annotated[str, msgspec.Meta(max_length=64)] | UnsetType | None = UNSET
