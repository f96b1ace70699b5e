"""Every change of a balance goes through ``WalletService.post``, so one place keeps the invariant:
balance = sum of ledger amounts = last running balance >= 0, and the open lots hold the balance.

Writes follow ARCHITECTURE.md "Money-like writes": the wallet row is locked first (``SELECT ...
FOR UPDATE``; a merge locks both wallets in id order, so no two writers wait on each other in a
circle), the idempotency key is looked up under that lock (a duplicate waits for the first and
then answers its replay), then the entry, its lots and the balance are written together. A
refusal raises before anything is written, so its key stays free.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.customers.errors import CustomerDeactivated, CustomerNotFound
from loyalty_core.customers.models import Customer, CustomerIdentifier
from loyalty_core.errors import IdempotencyKeyConflict, ValidationFailed
from loyalty_core.tenancy.models import Plan, Vendor
from loyalty_core.wallet import ledger
from loyalty_core.wallet.errors import InsufficientBalance, WalletBusy, WalletNotFound
from loyalty_core.wallet.models import LedgerEntry, PointLot, Wallet

MERGE_REASON = "merge"


class Unknown:
    """Marks an argument the caller does not know, as opposed to a known ``None``."""


UNKNOWN = Unknown()


@dataclass(frozen=True, slots=True)
class Causer:
    type: str
    id: str | None = None


SYSTEM = Causer("system")


@dataclass(frozen=True, slots=True)
class WalletView:
    wallet: Wallet
    expiring_soon: int


@dataclass(frozen=True, slots=True)
class Adjusted:
    entry: LedgerEntry
    created: bool
    """False for a replay: the original entry, nothing written."""


@dataclass(frozen=True, slots=True)
class LedgerFilter:
    date_from: datetime | date | None = None
    date_to: datetime | date | None = None
    type: str | None = None


class WalletService:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    # --- reads ---------------------------------------------------------------------------------

    async def customer(self, vendor_id: int, customer_id: int) -> Customer:
        found: Customer | None = await self._session.scalar(
            select(Customer).where(
                Customer.vendor_id == vendor_id, Customer.id == customer_id, Customer.status != "anonymized"
            )
        )
        if found is None:
            raise CustomerNotFound("No customer with this id.", customer_id=customer_id)
        return found

    async def wallet_of(self, vendor_id: int, customer_id: int, *, lock: bool = False) -> Wallet:
        query = select(Wallet).where(Wallet.vendor_id == vendor_id, Wallet.customer_id == customer_id)
        if lock:
            query = query.with_for_update()
        wallet: Wallet | None = await self._session.scalar(query)
        if wallet is None:
            raise WalletNotFound("The customer has no wallet.", customer_id=customer_id)
        return wallet

    async def read(self, vendor_id: int, customer_id: int) -> WalletView:
        await self.customer(vendor_id, customer_id)
        wallet = await self.wallet_of(vendor_id, customer_id)
        now = self._clock.now()
        soon = await self._session.scalar(
            select(func.coalesce(func.sum(PointLot.remaining), 0)).where(
                PointLot.wallet_id == wallet.id,
                PointLot.remaining > 0,
                PointLot.expires_at > now,
                PointLot.expires_at <= now + ledger.EXPIRING_SOON,
            )
        )
        return WalletView(wallet=wallet, expiring_soon=int(soon or 0))

    async def entries(
        self, vendor_id: int, customer_id: int, filters: LedgerFilter, *, offset: int, limit: int
    ) -> tuple[list[LedgerEntry], int]:
        """Newest first. A bare ``date_to`` keeps entries strictly before 00:00 UTC of that day."""
        await self.customer(vendor_id, customer_id)
        wallet = await self.wallet_of(vendor_id, customer_id)
        conditions = [LedgerEntry.wallet_id == wallet.id]
        if filters.date_from is not None:
            conditions.append(LedgerEntry.created_at >= _instant(filters.date_from))
        if filters.date_to is not None:
            if isinstance(filters.date_to, datetime):
                conditions.append(LedgerEntry.created_at <= filters.date_to)
            else:
                conditions.append(LedgerEntry.created_at < _instant(filters.date_to))
        if filters.type is not None:
            conditions.append(LedgerEntry.type == filters.type)
        total = await self._session.scalar(select(func.count()).select_from(LedgerEntry).where(*conditions))
        rows = await self._session.scalars(
            select(LedgerEntry)
            .where(*conditions)
            .order_by(LedgerEntry.created_at.desc(), LedgerEntry.id.desc())
            .offset(offset)
            .limit(limit)
        )
        return list(rows), int(total or 0)

    # --- the one way a balance changes ---------------------------------------------------------

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
    ) -> tuple[LedgerEntry, list[ledger.Take]]:
        """Write one entry on a wallet the caller has locked. A positive amount opens one lot ending
        ``expire_after_days`` after now, or the given ``lots`` (points, end) when they carry their
        own end dates (a merge); a negative one takes points soonest-ending first."""
        now = self._clock.now()
        balance = wallet.balance + amount
        if balance < 0:
            raise InsufficientBalance(
                "The balance is too low for this deduction.", balance=wallet.balance, amount=amount
            )
        entry = LedgerEntry(
            vendor_id=wallet.vendor_id,
            wallet_id=wallet.id,
            type=kind,
            amount=amount,
            running_balance=balance,
            reason=reason,
            causer_type=causer.type,
            causer_id=causer.id,
            idempotency_key=key,
            created_at=now,
            updated_at=now,
        )
        self._session.add(entry)
        await self._session.flush()
        takes: list[ledger.Take] = []
        if amount > 0:
            for points, expires_at in lots or [(amount, ledger.lot_expiry(now, expire_after_days))]:
                self._session.add(
                    PointLot(
                        vendor_id=wallet.vendor_id,
                        wallet_id=wallet.id,
                        entry_id=entry.id,
                        points=points,
                        remaining=points,
                        expires_at=expires_at,
                    )
                )
        else:
            open_lots = (
                await self._session.scalars(
                    select(PointLot).where(PointLot.wallet_id == wallet.id, PointLot.remaining > 0)
                )
            ).all()
            by_id = {lot.id: lot for lot in open_lots}
            takes = ledger.take([ledger.Lot(lot.id, lot.expires_at, lot.remaining) for lot in open_lots], -amount)
            for t in takes:
                by_id[t.lot_id].remaining -= t.points
        wallet.balance = balance
        wallet.updated_at = now
        await self._session.flush()
        return entry, takes

    # --- adjustments (spec: POST /customers/{customer}/wallet/adjust, rules 1 to 5) --------------

    async def adjust(
        self,
        vendor_id: int,
        customer_id: int,
        *,
        amount: int,
        reason: str,
        key: str,
        causer: Causer,
        expire_after_days: int | Unknown | None = UNKNOWN,
    ) -> Adjusted:
        """``expire_after_days``: the vendor's term for new points when the caller already knows it
        (the authenticated vendor context does); looked up otherwise."""
        customer, wallet = await self._customer_and_locked_wallet(vendor_id, customer_id)
        previous: LedgerEntry | None = await self._session.scalar(
            _ADJUSTMENT_BY_KEY, {"vendor_id": vendor_id, "customer_id": customer.id, "key": key}
        )
        if previous is not None:
            if previous.amount != amount:
                raise IdempotencyKeyConflict("This key was used for a different amount.", idempotency_key=key)
            return Adjusted(previous, created=False)
        if customer.merged_into_id is not None:
            raise CustomerDeactivated(
                "The account was merged into another and takes no new adjustments.",
                merged_into_id=customer.merged_into_id,
            )
        if amount > 0 and isinstance(expire_after_days, Unknown):
            expire_after_days = await self._expiry_days(vendor_id)
        entry, _ = await self.post(
            wallet,
            amount,
            kind="adjust",
            causer=causer,
            reason=reason,
            key=key,
            expire_after_days=None if isinstance(expire_after_days, Unknown) else expire_after_days,
        )
        return Adjusted(entry, created=True)

    async def _customer_and_locked_wallet(self, vendor_id: int, customer_id: int) -> tuple[Customer, Wallet]:
        """The customer and its wallet, the wallet row locked, in one round trip."""
        try:
            row = (
                await self._session.execute(
                    _CUSTOMER_AND_LOCKED_WALLET, {"vendor_id": vendor_id, "customer_id": customer_id}
                )
            ).first()
        except OperationalError as exc:
            raise _busy(exc) from exc
        if row is None:
            await self.customer(vendor_id, customer_id)  # which one is missing: the customer or its wallet
            raise WalletNotFound("The customer has no wallet.", customer_id=customer_id)
        return row[0], row[1]

    async def _expiry_days(self, vendor_id: int) -> int | None:
        """New points expire only while the vendor's plan has point expiry and the vendor set a term."""
        row = (
            await self._session.execute(
                select(Vendor.points_expire_after_days, Plan.feature_point_expiry)
                .join(Plan, Plan.id == Vendor.plan_id)
                .where(Vendor.id == vendor_id)
            )
        ).first()
        if row is None or not row[1]:
            return None
        days: int | None = row[0]
        return days

    async def _locked(self, pending: Awaitable[Wallet | None]) -> Wallet:
        try:
            wallet = await pending
        except OperationalError as exc:
            raise _busy(exc) from exc
        if wallet is None:
            raise WalletNotFound("The wallet does not exist.")
        return wallet

    # --- expiry (the expire-points job) ----------------------------------------------------------

    async def wallets_with_expired_points(self, now: datetime) -> list[tuple[int, int]]:
        rows = await self._session.execute(
            select(PointLot.vendor_id, PointLot.wallet_id)
            .where(PointLot.remaining > 0, PointLot.expires_at <= now)
            .distinct()
            .order_by(PointLot.wallet_id)
        )
        return [(int(v), int(w)) for v, w in rows]

    async def expire_wallet(self, vendor_id: int, wallet_id: int, now: datetime) -> LedgerEntry | None:
        """One ``expire`` entry for the lots of this wallet that ran out by ``now``, whatever the
        vendor's current setting; none when nothing ran out (so a second run writes nothing)."""
        wallet = await self._locked(
            self._session.scalar(
                select(Wallet).where(Wallet.vendor_id == vendor_id, Wallet.id == wallet_id).with_for_update()
            )
        )
        expired = await self._session.scalar(
            select(func.coalesce(func.sum(PointLot.remaining), 0)).where(
                PointLot.wallet_id == wallet_id, PointLot.remaining > 0, PointLot.expires_at <= now
            )
        )
        if not expired:
            return None
        # soonest-ending lots go first, so the points taken are exactly those that ran out
        entry, _ = await self.post(wallet, -int(expired), kind="expire", causer=SYSTEM, reason="expired")
        return entry

    # --- merge (admin portal; spec: Merged customers, rules 1 to 6) -------------------------------

    async def merge(
        self, vendor_id: int, closing_id: int, into_id: int, *, causer: Causer
    ) -> tuple[Customer, Customer]:
        if closing_id == into_id:
            raise ValidationFailed(
                "A customer cannot be merged into itself.",
                {"into_customer_id": ["The customer to keep must be another customer."]},
            )
        closing = await self.customer(vendor_id, closing_id)
        kept = await self.customer(vendor_id, into_id)
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
        locked = {
            w.customer_id: w
            for w in [
                await self._locked(self.wallet_of(vendor_id, first, lock=True)),
                await self._locked(self.wallet_of(vendor_id, second, lock=True)),
            ]
        }
        source, target = locked[closing_id], locked[into_id]
        if source.balance > 0:
            open_lots = {
                lot.id: lot
                for lot in (
                    await self._session.scalars(
                        select(PointLot).where(PointLot.wallet_id == source.id, PointLot.remaining > 0)
                    )
                ).all()
            }
            _, takes = await self.post(source, -source.balance, kind="adjust", causer=causer, reason=MERGE_REASON)
            moved = [(t.points, open_lots[t.lot_id].expires_at) for t in takes]
            await self.post(
                target, sum(p for p, _ in moved), kind="adjust", causer=causer, reason=MERGE_REASON, lots=moved
            )
        await self._move_identifiers(vendor_id, closing, kept)
        closing.status = "deactivated"
        closing.merged_into_id = kept.id
        await self._session.flush()
        return closing, kept

    async def _move_identifiers(self, vendor_id: int, closing: Customer, kept: Customer) -> None:
        """Active cards (and retired scanning values) go to the kept account, past five if need be,
        behind its own cards so its ``loyalty_card_code`` does not change. The closed account's email
        stops resolving when the kept account has its own (merge rule 3)."""
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
                CustomerIdentifier.type != "email",
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
                    CustomerIdentifier.type == "email",
                )
                .values(active=False)
            )


# Built once: constructing these per call cost more than running them.
_CUSTOMER_AND_LOCKED_WALLET = (
    select(Customer, Wallet)
    .join(Wallet, (Wallet.vendor_id == Customer.vendor_id) & (Wallet.customer_id == Customer.id))
    .where(
        Customer.vendor_id == bindparam("vendor_id"),
        Customer.id == bindparam("customer_id"),
        Customer.status != "anonymized",
    )
    .with_for_update(of=Wallet)
)


def _key_scope() -> Any:
    """Wallet ids whose adjustment keys count for the customer: its own and those of every
    account merged into it, at any depth (adjust rules 1 and 4)."""
    family = (
        select(Customer.id)
        .where(Customer.vendor_id == bindparam("vendor_id"), Customer.id == bindparam("customer_id"))
        .cte("family", recursive=True)
    )
    family = family.union_all(
        select(Customer.id).where(Customer.vendor_id == bindparam("vendor_id"), Customer.merged_into_id == family.c.id)
    )
    return select(Wallet.id).where(
        Wallet.vendor_id == bindparam("vendor_id"), Wallet.customer_id.in_(select(family.c.id))
    )


_ADJUSTMENT_BY_KEY: Any = (
    select(LedgerEntry)
    .where(
        LedgerEntry.wallet_id.in_(_key_scope()),
        LedgerEntry.type == "adjust",
        LedgerEntry.idempotency_key == bindparam("key"),
    )
    .order_by(LedgerEntry.id)
    .limit(1)
)


def _busy(exc: OperationalError) -> Exception:
    """A lock wait past the connection's lock_timeout is a clean, retryable refusal, not a 500."""
    if "lock timeout" in str(exc).lower():
        return WalletBusy("The wallet is busy with another write; retry in a moment.", retry_after=1)
    return exc


def _instant(value: datetime | date) -> datetime:
    if isinstance(value, datetime):
        return value
    return datetime.combine(value, time(0), tzinfo=UTC)
