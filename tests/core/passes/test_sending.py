"""The send-card cooldown claim on the service clock (PASS-4: 60 seconds per
customer; the cooldown starts only with a 202)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import FixedClock
from loyalty_core.passes.errors import CardSendThrottled
from loyalty_core.passes.services.sending import CardSends
from tests.support.vendors import make_vendor
from tests.support.wallets import make_customer


def _sends_at(db: AsyncSession, clock: FixedClock, seconds: float) -> CardSends:
    return CardSends(db, FixedClock(clock.now() + timedelta(seconds=seconds)))


async def test_a_claim_read_a_moment_earlier_is_still_throttled(db: AsyncSession, clock: FixedClock) -> None:
    """Racing requests read the clock in one order and reach the row in another: a send whose now is
    a few milliseconds before the accepted one's start is inside the same minute, not after it."""
    vendor = await make_vendor(db)
    customer = await make_customer(db, vendor.id, email="ann@example.com")
    first = _sends_at(db, clock, 0.005)
    await first.accept(await first.by_id(vendor.id, customer.id), message_domain="example.com")
    earlier = _sends_at(db, clock, 0)
    with pytest.raises(CardSendThrottled) as refused:
        await earlier.accept(await earlier.by_id(vendor.id, customer.id), message_domain="example.com")
    assert refused.value.details == {"retry_after": 60}


async def test_the_minute_is_measured_on_the_service_clock(db: AsyncSession, clock: FixedClock) -> None:
    vendor = await make_vendor(db)
    customer = await make_customer(db, vendor.id, email="bo@example.com")
    for seconds, accepted in ((0, True), (59.5, False), (60, True), (61, False), (-3600, True)):
        sends = _sends_at(db, clock, seconds)
        view = await sends.by_id(vendor.id, customer.id)
        if accepted:
            mail = await sends.accept(view, message_domain="example.com")
            assert mail.message_id.endswith("@example.com>")
        else:
            with pytest.raises(CardSendThrottled):
                await sends.accept(view, message_domain="example.com")
