"""Merge (admin portal; MERGE-1 to MERGE-7): one account closes into another.

It moves the points with their end dates through the wallet's one posting path, moves the
identifiers, and closes the customer row; it sits above customers and wallet because it changes both.
"""

from __future__ import annotations

from datetime import timedelta

from psycopg.errors import DeadlockDetected
from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.accounts.events import CustomerMerged
from loyalty_core.accounts.reads.customer import CustomerReads
from loyalty_core.clock import Clock
from loyalty_core.customers.errors import CustomerDeactivated, CustomerNotFound
from loyalty_core.customers.models import Customer, CustomerIdentifier, CustomerStatus
from loyalty_core.customers.rules import cards
from loyalty_core.errors import ValidationFailed
from loyalty_core.events.services.recording import record_event
from loyalty_core.referrals.models import Referral, ReferralStatus, referral_payouts
from loyalty_core.tiers.events import CustomerTierChanged
from loyalty_core.wallet.models import OPEN_LOT, Causer, EntryType, PendingPoints, PointLot, Wallet
from loyalty_core.wallet.services.posting import Posting, locked
from loyalty_core.wallet.till_protocol import ATTEMPTS

MERGE_REASON = "merge"


class MergeService:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock
        self._posting = Posting(session, clock)
        self._customers = CustomerReads(session, clock)

    async def merge(
        self, vendor_id: int, closing_id: int, into_id: int, *, causer: Causer
    ) -> tuple[Customer, Customer]:
        """Each attempt under a savepoint: a referral's completion locks the referrer's wallet while
        it holds the referee's (REFERRAL-18), so a merge of the one into the other can deadlock with
        it; the attempt PostgreSQL refuses is undone, its locks released, and run again."""
        for attempt in range(1, ATTEMPTS + 1):
            try:
                async with self._session.begin_nested():
                    return await self._merge(vendor_id, closing_id, into_id, causer=causer)
            except DBAPIError as exc:
                if not isinstance(exc.orig, DeadlockDetected) or attempt == ATTEMPTS:
                    raise
            except DeadlockDetected:
                if attempt == ATTEMPTS:
                    raise
        raise AssertionError("unreachable")

    async def _merge(
        self, vendor_id: int, closing_id: int, into_id: int, *, causer: Causer
    ) -> tuple[Customer, Customer]:
        if closing_id == into_id:
            raise ValidationFailed(
                "A customer cannot be merged into itself.",
                {"into_customer_id": ["The customer to keep must be another customer."]},
            )
        closing, kept = await self._lock_both(vendor_id, closing_id, into_id)
        if closing.merged_into_id is not None:
            raise CustomerDeactivated(
                "This account was already merged into another.", merged_into_id=closing.merged_into_id
            )
        if kept.merged_into_id is not None:
            raise ValidationFailed(
                "The account to keep was itself merged into another.",
                {"into_customer_id": ["The customer to keep is a closed, merged account."]},
            )
        # both wallets in id order: a merge never waits on a writer that waits on it
        first, second = sorted((closing_id, into_id))
        wallets = {
            w.customer_id: w
            for w in [
                await locked(self._posting.wallet_of(vendor_id, first, lock=True)),
                await locked(self._posting.wallet_of(vendor_id, second, lock=True)),
            ]
        }
        source, target = wallets[closing_id], wallets[into_id]
        # TIER-16: the kept account's tier before the family grows
        tier_before = (await self._customers.get(vendor_id, into_id)).tier
        now = self._clock.now()
        # PENDING-5: points that became available are written first, on the wallet that earned them
        await self._posting.make_available(source, now)
        await self._posting.make_available(target, now)
        # points past their end expire here rather than move on to the kept account
        await self._posting.expire_due(source)
        if source.balance > 0:
            open_lots = {
                lot.id: lot
                for lot in (
                    await self._session.scalars(
                        select(PointLot)
                        .where(PointLot.wallet_id == source.id, OPEN_LOT)
                        .execution_options(populate_existing=True)
                    )
                ).all()
            }
            _, takes = await self._posting.post(
                source, -source.balance, kind=EntryType.ADJUST, causer=causer, reason=MERGE_REASON
            )
            moved = [(t.points, open_lots[t.lot_id].expires_at) for t in takes]
            await self._posting.post(
                target, sum(p for p, _ in moved), kind=EntryType.ADJUST, causer=causer, reason=MERGE_REASON, lots=moved
            )
        await self._move_pending(source, target)
        await self._move_referrals(vendor_id, closing.id, kept.id)
        await self._move_identifiers(vendor_id, closing, kept)
        closing.status = CustomerStatus.DEACTIVATED
        closing.merged_into_id = kept.id
        await self._session.flush()
        # accounts merged earlier into the one closing now follow it to the kept account, so no
        # account ever stays merged into a closed one
        await self._session.execute(
            update(Customer)
            .where(Customer.vendor_id == vendor_id, Customer.merged_into_id == closing.id)
            .values(merged_into_id=kept.id)
        )
        # EVENT-6: the closed account as the API shows it; the points moved above record no points.*
        closed = await self._customers.get(vendor_id, closing.id)
        await record_event(self._session, self._clock, vendor_id, CustomerMerged.of(closed), customer_id=closed.id)
        # TIER-16: the closed account's months now count for the kept one: a move between tiers is
        # recorded in the merge's transaction
        after = await self._customers.get(vendor_id, kept.id)
        if tier_before is not None and after.tier is not None and tier_before.key != after.tier.key:
            tier_moved = CustomerTierChanged.moved(after, tier_before)
            await record_event(self._session, self._clock, vendor_id, tier_moved, customer_id=after.id)
        return closing, kept

    async def _move_pending(self, source: Wallet, target: Wallet) -> None:
        """PENDING-7: the closed account's pending points move with their instants to the kept one,
        whose wallet then writes their entries; the closed one shows none."""
        if source.pending_next_at is None:
            return
        await self._session.execute(
            update(PendingPoints)
            .where(PendingPoints.vendor_id == source.vendor_id, PendingPoints.wallet_id == source.id)
            .values(wallet_id=target.id)
        )
        soonest = source.pending_next_at
        if target.pending_next_at is not None:
            soonest = min(soonest, target.pending_next_at)
        target.pending_next_at = soonest
        source.pending_next_at = None
        await self._session.flush()

    async def _move_referrals(self, vendor_id: int, closing_id: int, kept_id: int) -> None:
        """REFERRAL-20: a pending referral whose referee closes, or whose referrer closes into its
        referee, is void (a completed one stays); the closed account's referrals as referrer, and its
        paid count (the cap's row), go to the kept account, which is paid for them from now on."""
        referrals = Referral.__table__.c
        await self._session.execute(
            update(Referral)
            .where(
                referrals.vendor_id == vendor_id,
                referrals.status == ReferralStatus.PENDING,
                (referrals.referee_id == closing_id)
                | ((referrals.referrer_id == closing_id) & (referrals.referee_id == kept_id)),
            )
            .values(status=ReferralStatus.VOID, updated_at=self._clock.now())
        )
        await self._session.execute(
            update(Referral)
            .where(referrals.vendor_id == vendor_id, referrals.referrer_id == closing_id)
            .values(referrer_id=kept_id, updated_at=self._clock.now())
        )
        payouts = referral_payouts.c
        paid = await self._session.scalar(
            referral_payouts.delete()
            .where(payouts.vendor_id == vendor_id, payouts.referrer_id == closing_id)
            .returning(payouts.paid)
        )
        if paid:
            added = insert(referral_payouts).values(vendor_id=vendor_id, referrer_id=kept_id, paid=paid)
            await self._session.execute(
                added.on_conflict_do_update(
                    index_elements=[payouts.vendor_id, payouts.referrer_id],
                    set_={"paid": payouts.paid + added.excluded.paid},
                )
            )

    async def _lock_both(self, vendor_id: int, closing_id: int, into_id: int) -> tuple[Customer, Customer]:
        """Both customer rows, locked in id order and read as committed now (never against the key
        checks of a till write that holds a wallet, see below): the "already merged"
        checks are decided on these rows, so of two merges racing over one account exactly one
        succeeds (A into B with B into A, or A into B with C into A). Rows read before the locks
        would let both pass and leave an account merged into a closed one."""
        found = {
            c.id: c
            for c in (
                await self._session.scalars(
                    select(Customer)
                    .where(
                        Customer.vendor_id == vendor_id,
                        Customer.id.in_((closing_id, into_id)),
                        Customer.status != CustomerStatus.ANONYMIZED,
                    )
                    .order_by(Customer.id)
                    # FOR NO KEY UPDATE: two merges still queue on these rows, while a till write that
                    # holds a wallet and then checks a foreign key to its customer (FOR KEY SHARE)
                    # passes; FOR UPDATE made the two wait on each other (a deadlock, answered 503)
                    .with_for_update(key_share=True)
                    .execution_options(populate_existing=True)
                )
            ).all()
        }
        for wanted in (closing_id, into_id):
            if wanted not in found:
                raise CustomerNotFound("No customer with this id.", customer_id=wanted)
        return found[closing_id], found[into_id]

    async def _move_identifiers(self, vendor_id: int, closing: Customer, kept: Customer) -> None:
        """Active cards (and retired scanning values) go to the kept account, past five if need be,
        behind its own cards so its ``loyalty_card_code`` does not change. The closed account's email
        stops resolving when the kept account has its own (MERGE-4)."""
        newest_kept = await self._session.scalar(
            select(func.min(CustomerIdentifier.assigned_at)).where(
                CustomerIdentifier.vendor_id == vendor_id, CustomerIdentifier.customer_id == kept.id
            )
        )
        moved_at = (newest_kept or self._clock.now()) - timedelta(microseconds=1)
        await self._session.execute(
            update(CustomerIdentifier)
            .where(
                CustomerIdentifier.vendor_id == vendor_id,
                CustomerIdentifier.customer_id == closing.id,
                CustomerIdentifier.type != cards.EMAIL,
                CustomerIdentifier.active.is_(True),
            )
            .values(customer_id=kept.id, assigned_at=func.least(CustomerIdentifier.assigned_at, moved_at))
        )
        if kept.email:
            await self._session.execute(
                update(CustomerIdentifier)
                .where(
                    CustomerIdentifier.vendor_id == vendor_id,
                    CustomerIdentifier.customer_id == closing.id,
                    CustomerIdentifier.type == cards.EMAIL,
                )
                .values(active=False)
            )
