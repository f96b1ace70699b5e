"""Passes that stay current, in the core: the serial, the token check, the fingerprint, and the
``pass-updates`` batch's pushes with their retries on a fixed clock (PASS-9, PASS-10, PASS-13 to
PASS-15)."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import FixedClock
from loyalty_core.passes.jobs import Tally, update_batch
from loyalty_core.passes.models import PassRegistration
from loyalty_core.passes.rules import (
    PUSH_RETRY_AFTER,
    fingerprint,
    next_push_at,
    parse_serial,
    serial_of,
    token_hash,
    token_matches,
)
from loyalty_core.passes.services.cards import PassCards
from loyalty_core.passes.services.ports import BrandingFacts, CardFacts, PushOutcome, WalletPushes
from loyalty_core.passes.services.web_service import PassWebService
from tests.support.vendors import make_vendor
from tests.support.wallets import earned, make_customer

CARD = CardFacts(
    vendor_id=3,
    customer_id=7,
    card_code="CARD0001",
    holder_name="Ann",
    balance=10,
    locale="en",
    branding=BrandingFacts("Shop", "#ffffff", "#000000", "#333333", None, None),
)
TOKEN = "a-token-of-more-than-16-characters"


class Script(WalletPushes):
    """Answers each push with the next scripted outcome (then ok) and counts the pushes."""

    def __init__(self, *outcomes: PushOutcome) -> None:
        self.outcomes, self.sent = list(outcomes), 0

    async def push(
        self, vendor_id: int, pass_type_identifier: str, push_token: str, serial: str, now: datetime
    ) -> PushOutcome:
        self.sent += 1
        return self.outcomes.pop(0) if self.outcomes else PushOutcome.OK

    async def update_object(self, object_id: str, card: CardFacts, now: datetime) -> PushOutcome:
        return PushOutcome.OK


def test_the_serial_names_the_customer_and_reads_back() -> None:
    """PASS-9: one serial per customer, read back to its shop and customer; other text reads nothing."""
    assert serial_of(3, 7) == "v3-c7"
    assert parse_serial("v3-c7") == (3, 7)
    assert parse_serial(f"v{2**63 - 1}-c1") == (2**63 - 1, 1)
    for other in ("v3-c7x", "v0-c7", "3-7", "", "v3-c" + "9" * 30, "v3-c9999999999999999999"):
        assert parse_serial(other) is None


def test_only_the_pass_own_token_under_its_scheme_matches() -> None:
    """PASS-10: ``ApplePass <token>`` of this pass, compared on the stored hash."""
    stored = token_hash(TOKEN)
    assert token_matches(f"ApplePass {TOKEN}", stored)
    for header in (None, "", TOKEN, f"Bearer {TOKEN}", f"ApplePass {TOKEN}x", "ApplePass short"):
        assert not token_matches(header, stored)
    assert not token_matches(f"ApplePass {TOKEN}", None)


def test_the_fingerprint_moves_with_what_the_pass_shows_only() -> None:
    """PASS-13: balance, card, holder, locale and branding change it; the same content does not."""
    same = fingerprint(CARD)
    assert fingerprint(dataclasses.replace(CARD)) == same
    changed = [
        dataclasses.replace(CARD, balance=11),
        dataclasses.replace(CARD, card_code="CARD0002"),
        dataclasses.replace(CARD, holder_name="Bo"),
        dataclasses.replace(CARD, locale="nl"),
        dataclasses.replace(CARD, branding=dataclasses.replace(CARD.branding, background="#fffffe")),
        dataclasses.replace(CARD, branding=dataclasses.replace(CARD.branding, logo_png=b"png")),
    ]
    assert len({fingerprint(c) for c in changed} | {same}) == len(changed) + 1


def test_retries_follow_the_webhook_schedule_then_stop() -> None:
    """PASS-15: 1, 5, 30 minutes, 1, 2, 6, 12 hours after each failure, then none."""
    now = datetime(2026, 1, 1)
    waits = [next_push_at(n, now) for n in range(1, 9)]
    assert waits[:7] == [now + wait for wait in PUSH_RETRY_AFTER]
    assert PUSH_RETRY_AFTER[0] == timedelta(minutes=1)
    assert PUSH_RETRY_AFTER[-1] == timedelta(hours=12)
    assert waits[7] is None


async def test_a_failing_device_is_retried_on_schedule_then_waits_for_the_next_change(
    db: AsyncSession, clock: FixedClock
) -> None:
    """PASS-15: a failed push is tried again when its back-off ends, not before; after the last try
    the registration waits for the pass's next change, which is pushed again."""
    vendor = await make_vendor(db)
    customer = await make_customer(db, vendor.id)
    _, card = await PassCards(db, clock).for_pass(vendor.id, customer.id)
    web = PassWebService(db, clock)
    row = await web.records.keep(card, pass_type_identifier="pass.test", token=TOKEN)
    assert await web.register(row, "phone", "push-1")
    await earned(db, clock, vendor, customer, 5)
    pushes = Script(*[PushOutcome.UNAVAILABLE] * 8)

    async def run() -> int:
        before = pushes.sent
        await update_batch(db, clock, pushes, Tally())
        return pushes.sent - before

    assert await run() == 1
    for wait in PUSH_RETRY_AFTER:
        clock.set(clock.now() + wait - timedelta(seconds=1))
        assert await run() == 0
        clock.set(clock.now() + timedelta(seconds=1))
        assert await run() == 1
    clock.set(clock.now() + timedelta(days=2))
    assert await run() == 0  # every retry spent: waits for a change
    await earned(db, clock, vendor, customer, 5)
    assert await run() == 1
    registration = (await db.execute(select(PassRegistration))).scalars().all()
    assert [(r.device_id, r.attempts, r.next_attempt_at) for r in registration if r.pass_id == row.id] == [
        ("phone", 0, None)
    ]


def test_no_till_statement_touches_a_pass() -> None:
    """PASS-13: purchases, adjustments and redemptions gain no statement and no round trip for the
    passes: no till statement names a pass table (the job compares fingerprints instead), so a
    purchase costs the same with 0 or 3 registered devices."""
    import loyalty_core

    root = Path(loyalty_core.__file__).parent
    statements = sorted(root.rglob("till_*.sql"))
    assert len(statements) >= 10
    for path in statements:
        text = path.read_text()
        for table in ("wallet_passes", "pass_registrations"):
            assert table not in text, path.name
