"""The batch work of the ``pass-updates`` job (PASS-13 to PASS-16).

Nothing on the till's paths marks a pass: a batch reads what each registered or saved pass shows
now, compares its fingerprint with what the pass last showed, and moves the pass on when it
differs. Then every registration whose device was last told of other content gets one push, and
every platform_b object one update, however many changes came in between.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, exists, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.customers.errors import CustomerNotFound
from loyalty_core.errors import DomainError
from loyalty_core.passes.models import PassRegistration, WalletPass
from loyalty_core.passes.rules import next_push_at
from loyalty_core.passes.services.cards import PassCards
from loyalty_core.passes.services.ports import CardFacts, PushOutcome, WalletPushes
from loyalty_core.passes.services.records import PassRecords

_P = WalletPass.__table__.c
_R = PassRegistration.__table__.c
BATCH = 200


@dataclass
class Tally:
    changed: int = 0
    pushed: int = 0
    failed: int = 0
    gone: int = 0
    updated_objects: int = 0
    cursor: int = 0
    done: bool = False

    def as_result(self) -> dict[str, int]:
        return {
            "changed": self.changed,
            "pushed": self.pushed,
            "failed": self.failed,
            "gone": self.gone,
            "updated_objects": self.updated_objects,
        }


async def pass_batch(session: AsyncSession, after_id: int, limit: int = BATCH) -> list[WalletPass]:
    """The next passes (by id) that a platform knows of: registered devices or a saved object."""
    registered = exists().where(_R.vendor_id == _P.vendor_id, _R.pass_id == _P.id)
    rows = await session.execute(
        select(WalletPass)
        .where(_P.id > after_id, or_(registered, _P.object_id.is_not(None)))
        .order_by(_P.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return list(rows.scalars())


async def update_batch(
    session: AsyncSession, clock: Clock, pushes: WalletPushes | None, tally: Tally, limit: int = BATCH
) -> None:
    """One batch in the caller's transaction: bring each pass up to date, then push what is due
    (nothing without ``pushes``: the passes still move on, for the phones that ask)."""
    rows = await pass_batch(session, tally.cursor, limit)
    if not rows:
        tally.done = True
        return
    tally.cursor = rows[-1].id
    cards, records = PassCards(session, clock), PassRecords(session, clock)
    for row in rows:
        try:
            _, card = await cards.for_pass(row.vendor_id, row.customer_id)
        except CustomerNotFound:
            await records.forget(row.vendor_id, row.customer_id)
            continue
        except DomainError:
            # merged away or without a card: the pass keeps what it showed
            continue
        if await records.refresh(row, card):
            tally.changed += 1
        if pushes is None:
            continue
        await _push_registrations(session, clock, pushes, row, tally)
        await _update_object(clock, pushes, row, card, tally)
    await session.flush()


async def _push_registrations(
    session: AsyncSession, clock: Clock, pushes: WalletPushes, row: WalletPass, tally: Tally
) -> None:
    now = clock.now()
    due = await session.execute(
        select(PassRegistration)
        .where(
            _R.vendor_id == row.vendor_id,
            _R.pass_id == row.id,
            _R.known_fingerprint != row.fingerprint,
            or_(_R.gave_up_fingerprint.is_(None), _R.gave_up_fingerprint != row.fingerprint),
            or_(_R.next_attempt_at.is_(None), _R.next_attempt_at <= now),
        )
        .order_by(_R.id)
    )
    for registration in due.scalars():
        if row.pass_type_identifier is None:
            continue
        outcome = await pushes.push(row.vendor_id, row.pass_type_identifier, registration.push_token, row.serial, now)
        if outcome == PushOutcome.OK:
            tally.pushed += 1
            registration.known_fingerprint = row.fingerprint
            registration.attempts, registration.next_attempt_at = 0, None
            registration.gave_up_fingerprint = None
        elif outcome == PushOutcome.GONE:
            tally.gone += 1
            await session.execute(
                delete(PassRegistration).where(_R.vendor_id == row.vendor_id, _R.id == registration.id)
            )
            continue
        else:
            tally.failed += 1
            registration.attempts += 1
            registration.next_attempt_at = next_push_at(registration.attempts, now)
            if registration.next_attempt_at is None:
                registration.gave_up_fingerprint = row.fingerprint
                registration.attempts = 0
        registration.updated_at = now


async def _update_object(clock: Clock, pushes: WalletPushes, row: WalletPass, card: CardFacts, tally: Tally) -> None:
    now = clock.now()
    if row.object_id is None or row.object_fingerprint == row.fingerprint:
        return
    if row.object_next_at is not None and row.object_next_at > now:
        return
    outcome = await pushes.update_object(row.object_id, card, now)
    if outcome == PushOutcome.OK:
        tally.updated_objects += 1
        row.object_fingerprint, row.object_attempts, row.object_next_at = row.fingerprint, 0, None
        return
    tally.failed += 1
    row.object_attempts += 1
    row.object_next_at = next_push_at(row.object_attempts, now)
    if outcome == PushOutcome.GONE or row.object_next_at is None:
        # gone, or every retry spent: wait for the pass's next change
        row.object_fingerprint, row.object_attempts, row.object_next_at = row.fingerprint, 0, None
