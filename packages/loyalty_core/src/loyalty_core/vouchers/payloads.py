"""The payload of ``voucher.used``: the voucher as the API shows it."""

from __future__ import annotations

from loyalty_core.events.models import EventType
from loyalty_core.events.payloads import Payload
from loyalty_core.vouchers.resources import VoucherBody


class VoucherUsed(VoucherBody, Payload):
    event_type = EventType.VOUCHER_USED
    version = 1
