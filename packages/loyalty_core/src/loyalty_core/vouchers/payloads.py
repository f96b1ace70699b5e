"""The payload of ``voucher.used``: the voucher as the API shows it."""

from __future__ import annotations

from typing import ClassVar

from loyalty_core.events.models import EventType
from loyalty_core.vouchers.resources import VoucherBody


class VoucherUsed(VoucherBody):
    event_type: ClassVar[str] = EventType.VOUCHER_USED
    version: ClassVar[int] = 1
