"""The wallet writes of every caller that holds an ORM session (the portal's and the admin API's
actions, the expiry job): ``Posting.post`` runs the ledger's one writer
(``loyalty_core.wallet.till_posting``) on the session's connection.

Writes follow docs/architecture.md "Money-like writes": the wallet row is locked first (``SELECT ...
FOR UPDATE``; a merge locks both wallets in id order, so no two writers wait on each other in a
circle), the idempotency key is looked up under that lock (a duplicate waits for the first and
then answers its replay), then the entry, its lots and the balance are written together in one statement. A
refusal raises before anything is written, so its key stays free.
"""

from __future__ import annotations

from collections.abc import Awaitable
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import set_committed_value

from loyalty_core.clock import Clock
from loyalty_core.customers.errors import CustomerNotFound
from loyalty_core.customers.models import Customer, CustomerStatus
from loyalty_core.db import driver_connection
from loyalty_core.events.services.recording import RECORDED
from loyalty_core.wallet.errors import InsufficientBalance, WalletBusy, WalletNotFound
from loyalty_core.wallet.events import EntryPayload, PointsExpired
from loyalty_core.wallet.models import OPEN_LOT, SYSTEM, Causer, EntryType, PointLot, Wallet
from loyalty_core.wallet.resources import LedgerEntry
from loyalty_core.wallet.rules import Lot, Take, lot_expiry, split_due, take
from loyalty_core.wallet.till_pending import is_due, make_available
from loyalty_core.wallet.till_posting import EXPIRED_REASON, entry_params, write_entry


class Posting:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def customer(self, vendor_id: int, customer_id: int) -> Customer:
        found: Customer | None = await self._session.scalar(
            select(Customer).where(
                Customer.vendor_id == vendor_id,
                Customer.id == customer_id,
                Customer.status != CustomerStatus.ANONYMIZED,
            )
        )
        if found is None:
            raise CustomerNotFound("No customer with this id.", customer_id=customer_id)
        return found

    async def wallet_of(self, vendor_id: int, customer_id: int, *, lock: bool = False) -> Wallet:
        query = select(Wallet).where(Wallet.vendor_id == vendor_id, Wallet.customer_id == customer_id)
        if lock:
            # a locked read must see the row as committed now, not as this session cached it earlier
            query = query.with_for_update().execution_options(populate_existing=True)
        wallet: Wallet | None = await self._session.scalar(query)
        if wallet is None:
            raise WalletNotFound("The customer has no wallet.", customer_id=customer_id)
        return wallet

    async def post(
        self,
        wallet: Wallet,
        amount: int,
        *,
        kind: str,
        causer: Causer,
        reason: str | None = None,
        key: str | None = None,
        expire_after_days: int | None = None,
        lots: list[tuple[int, datetime | None]] | None = None,
        event: type[EntryPayload] | None = None,
        at: datetime | None = None,
    ) -> tuple[LedgerEntry, list[Take]]:
        """Write one entry on a wallet the caller has locked, through the ledger's one writer. A
        positive amount opens one lot ending ``expire_after_days`` after now, or the given ``lots``
        (points, end) when they carry their own end dates (a merge, a cancel); a negative one takes
        points soonest-ending first. ``event``: the entry's own event, if it has one (an expiry
        written first always records ``points.expired``, EVENT-4). ``at``: the entry's date when it is
        not now (an expiry's, dated the instant its lots ended, LIABILITY-3). A lot given back with an end
        already past (a cancel's) ends now instead, so it expires at this instant and no closed month
        changes (LIABILITY-3)."""
        now = self._clock.now()
        await self.make_available(wallet, now)
        takes: list[Take] = []
        expired: list[Take] = []
        opened: list[tuple[int, datetime | None]] = []
        if amount > 0:
            opened = [(p, None if end is None else max(end, now)) for p, end in lots] if lots else []
            opened = opened or [(amount, lot_expiry(now, expire_after_days))]
        else:
            open_lots = [
                Lot(i, x, r)
                for i, x, r in await self._session.execute(
                    select(PointLot.id, PointLot.expires_at, PointLot.remaining).where(
                        PointLot.vendor_id == wallet.vendor_id, PointLot.wallet_id == wallet.id, OPEN_LOT
                    )
                )
            ]
            # a deduction never spends points past their end: they expire in the same statement, first
            if kind != EntryType.EXPIRE:
                expired, open_lots = split_due(open_lots, now)
            spendable = wallet.balance - sum(t.points for t in expired)
            if spendable + amount < 0:
                raise InsufficientBalance(
                    "The balance is too low for this deduction.", balance=spendable, amount=amount
                )
            takes = take(open_lots, -amount)
        # what the session still holds unwritten goes first, then the entry on the same connection
        await self._session.flush()
        entry, deliveries = await write_entry(
            await driver_connection(self._session),
            entry_params(
                vendor_id=wallet.vendor_id,
                wallet_id=wallet.id,
                kind=kind,
                amount=amount,
                causer_type=causer.type,
                causer_id=causer.id,
                now=now,
                reason=reason,
                key=key,
                opened=opened,
                taken=takes,
                expired=expired,
                event=event,
                entry_at=at,
            ),
        )
        if deliveries:
            self._session.info[RECORDED] = True
        # the session's copy of the wallet shows the written balance, without a write of its own
        set_committed_value(wallet, "balance", entry.running_balance)
        set_committed_value(wallet, "updated_at", now)
        return entry, takes

    async def make_available(self, wallet: Wallet, now: datetime) -> None:
        """PENDING-5: before any write to a wallet the caller has locked, the ``earn`` entries of its
        pending points whose instant has passed (nothing to do, and no statement, when none is due)."""
        if not is_due(wallet.pending_next_at, now):
            return
        await self._session.flush()
        made = await make_available(await driver_connection(self._session), wallet.vendor_id, wallet.id, now)
        if made.deliveries:
            self._session.info[RECORDED] = True
        # the session's copy of the wallet shows what was written, without a write of its own
        await self._session.refresh(wallet, ["balance", "pending_next_at", "updated_at"])

    async def expire_due(self, wallet: Wallet, now: datetime | None = None) -> LedgerEntry | None:
        """The ``expire`` entry for the lots of a wallet the caller has locked whose end has passed
        by ``now`` (the clock's by default); none when nothing is due. The nightly job writes it, and
        so does a write that moves the whole balance (a merge), which must not carry points past
        their end to another account; soonest-ending lots go first, so the points taken are exactly
        those that ran out."""
        until = now or self._clock.now()
        # PENDING-5: an availability goes before the expiry of its own lot
        await self.make_available(wallet, until)
        due = (
            await self._session.execute(
                select(PointLot.expires_at, func.sum(PointLot.remaining))
                .where(
                    PointLot.vendor_id == wallet.vendor_id,
                    PointLot.wallet_id == wallet.id,
                    OPEN_LOT,
                    PointLot.expires_at <= until,
                )
                .group_by(PointLot.expires_at)
                .order_by(PointLot.expires_at)
            )
        ).all()
        entry = None
        # one entry per instant lots ended, dated then (LIABILITY-3), oldest first: each takes exactly its lots
        for ended, points in due:
            entry, _ = await self.post(
                wallet,
                -int(points),
                kind=EntryType.EXPIRE,
                causer=SYSTEM,
                reason=EXPIRED_REASON,
                event=PointsExpired,
                at=ended,
            )
        return entry

    async def open_wallet(self, vendor_id: int, customer_id: int) -> Wallet:
        """The locked wallet of the account that holds ``customer_id``'s points now: its own, or the
        one it was merged into. Decided under that wallet's lock, which a merge of the account
        needs too: a merge that committed first is seen (and followed), one that comes later waits
        and then moves what this transaction wrote."""
        target = customer_id
        for _ in range(_FOLLOW):
            wallet = await locked(self.wallet_of(vendor_id, target, lock=True))
            merged_into = await self._session.scalar(
                select(Customer.merged_into_id)
                .where(Customer.vendor_id == vendor_id, Customer.id == target)
                .execution_options(populate_existing=True)
            )
            if merged_into is None:
                return wallet
            target = merged_into
        raise WalletBusy("The wallet is busy with another write; retry in a moment.", retry_after=1)


async def locked(pending: Awaitable[Wallet | None]) -> Wallet:
    """The wallet a locking read finds; a lock wait past the timeout answers ``WALLET_BUSY``."""
    try:
        wallet = await pending
    except OperationalError as exc:
        raise _busy(exc) from exc
    if wallet is None:
        raise WalletNotFound("The wallet does not exist.")
    return wallet


_FOLLOW = 5
"""Merges re-point accounts merged earlier, so one step reaches the open end; more only when merges
commit while this one follows."""


def _busy(exc: OperationalError) -> Exception:
    """A lock wait past the connection's lock_timeout is a clean, retryable refusal, not a 500."""
    if "lock timeout" in str(exc).lower():
        return WalletBusy("The wallet is busy with another write; retry in a moment.", retry_after=1)
    return exc
