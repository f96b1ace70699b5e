"""The batch work of the ``pass-updates`` job (PASS-13 to PASS-16).

Nothing on the till's paths marks a pass: a batch reads what each registered or saved pass shows
now, compares its fingerprint with what the pass last showed, and moves the pass on when it
differs. Then every registration whose device was last told of other content gets one push, and
every platform_b object one update, however many changes came in between.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, exists, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.accounts.reads.customer import customer_rows
from loyalty_core.clock import Clock
from loyalty_core.customers.models import Customer, CustomerStatus
from loyalty_core.customers.reads.customer import view_of
from loyalty_core.errors import DomainError
from loyalty_core.passes.models import PassRegistration, WalletPass
from loyalty_core.passes.rules import next_push_at
from loyalty_core.passes.services.cards import PassCards
from loyalty_core.passes.services.ports import BrandingFacts, CardFacts, PushOutcome, WalletPushes
from loyalty_core.passes.services.records import PassRecords

_C = Customer.__table__.c
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


async def _customers(session: AsyncSession, clock: Clock, rows: list[WalletPass]) -> dict[tuple[int, int], Any]:
    """The batch's customers as the customer read shows them, one statement per shop; anonymized
    customers are left out."""
    by_vendor: dict[int, list[int]] = defaultdict(list)
    for row in rows:
        by_vendor[row.vendor_id].append(row.customer_id)
    found: dict[tuple[int, int], Any] = {}
    for vendor_id, ids in by_vendor.items():
        read = await session.execute(
            customer_rows(clock.now()).where(
                _C.vendor_id == vendor_id, _C.id.in_(ids), _C.status != CustomerStatus.ANONYMIZED
            )
        )
        for customer in read.mappings():
            found[(vendor_id, customer["id"])] = view_of(customer)
    return found


async def _registrations(session: AsyncSession, rows: list[WalletPass]) -> dict[int, list[PassRegistration]]:
    """The batch's registrations by pass, locked for this run, one statement per shop."""
    by_vendor: dict[int, list[int]] = defaultdict(list)
    for row in rows:
        by_vendor[row.vendor_id].append(row.id)
    found: dict[int, list[PassRegistration]] = defaultdict(list)
    for vendor_id, ids in by_vendor.items():
        read = await session.execute(
            select(PassRegistration)
            .where(_R.vendor_id == vendor_id, _R.pass_id.in_(ids))
            .order_by(_R.id)
            .with_for_update()
        )
        for registration in read.scalars():
            found[registration.pass_id].append(registration)
    return found


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
    customers, registrations = await _customers(session, clock, rows), await _registrations(session, rows)
    brandings: dict[int, BrandingFacts] = {}
    for row in rows:
        customer = customers.get((row.vendor_id, row.customer_id))
        if customer is None:
            await records.forget(row.vendor_id, row.customer_id)
            continue
        if row.vendor_id not in brandings:
            brandings[row.vendor_id] = await cards.branding(row.vendor_id)
        try:
            card = await cards.facts_of(customer, brandings[row.vendor_id])
        except DomainError:
            # merged away or without a card: the pass keeps what it showed
            continue
        if await records.refresh(row, card, flush=False):
            tally.changed += 1
        if pushes is None:
            continue
        await _push_registrations(session, clock, pushes, row, registrations.get(row.id, []), tally)
        await _update_object(clock, pushes, row, card, tally)
    await session.flush()


def _due(registration: PassRegistration, row: WalletPass, now: datetime) -> bool:
    """Told of other content than the pass shows now, not given up on it, and its back-off over."""
    return (
        registration.known_fingerprint != row.fingerprint
        and registration.gave_up_fingerprint != row.fingerprint
        and (registration.next_attempt_at is None or registration.next_attempt_at <= now)
    )


async def _push_registrations(
    session: AsyncSession,
    clock: Clock,
    pushes: WalletPushes,
    row: WalletPass,
    registrations: list[PassRegistration],
    tally: Tally,
) -> None:
    now = clock.now()
    for registration in registrations:
        if row.pass_type_identifier is None or not _due(registration, row, now):
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
