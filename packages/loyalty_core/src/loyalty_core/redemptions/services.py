"""Redeeming a reward and verifying its code (spec: POST /redemptions, POST /redemptions/{code}/verify).

A redemption is a money-like write: a transaction lock on the vendor's key first (a key is per
vendor, so two customers sending one key wait for each other), then the customer's wallet row
locked, so the per-customer limit and the balance are exact; stock goes down by a conditional
update that never passes 0. Every refusal raises before the transaction commits, so it writes
nothing and leaves its key free. A till's verify and read of a code are in ``till_verify``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.accounts.customers import CustomerService
from loyalty_core.clock import Clock
from loyalty_core.customers.errors import CustomerDeactivated
from loyalty_core.customers.models import CustomerStatus
from loyalty_core.errors import IdempotencyKeyConflict
from loyalty_core.redemptions import errors as e
from loyalty_core.redemptions.codes import new_code
from loyalty_core.redemptions.models import Redemption, StoredStatus
from loyalty_core.rewards.errors import RewardNotFound
from loyalty_core.rewards.models import Reward, RewardBranch, RewardStatus
from loyalty_core.tenancy.access import BranchRef
from loyalty_core.tenancy.errors import BranchInactive, BranchNotFound
from loyalty_core.tenancy.models import Branch, Vendor
from loyalty_core.wallet import ledger
from loyalty_core.wallet.models import CauserType, EntryType, PointLot
from loyalty_core.wallet.services.posting import Causer, Posting


@dataclass(frozen=True, slots=True)
class RedeemRequest:
    identifier: str
    reward_id: int
    idempotency_key: str
    branch: str | None = None
    """The payload's branch key; None falls back to the credential's default (branch rule 1)."""


@dataclass(frozen=True, slots=True)
class Redeemed:
    redemption: Redemption
    branch: Branch | None
    replayed: bool


class RedemptionService:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def redeem(
        self, vendor_id: int, request: RedeemRequest, *, default_branch: BranchRef | None, client_id: str
    ) -> Redeemed:
        """Checks in the contract's order: customer, wallet, reward (404, then 422), branch,
        per-customer limit, stock, balance; a replay is answered once the wallet is locked."""
        await self._session.execute(
            text("SELECT pg_advisory_xact_lock(:vendor, hashtext(:key))"),
            {"vendor": vendor_id, "key": "redemption:" + request.idempotency_key},
        )
        found = await CustomerService(self._session, self._clock).lookup(vendor_id, identifier=request.identifier)
        if found.status == CustomerStatus.DEACTIVATED:
            raise CustomerDeactivated("The customer is deactivated.", customer_id=found.id)
        posting = Posting(self._session, self._clock)
        wallet = await posting.wallet_of(vendor_id, found.id, lock=True)
        earlier: Redemption | None = await self._session.scalar(
            select(Redemption).where(
                Redemption.vendor_id == vendor_id, Redemption.idempotency_key == request.idempotency_key
            )
        )
        reward = await self._reward(vendor_id, request.reward_id)
        if earlier is not None:
            if (
                earlier.customer_id != found.id
                or earlier.reward_id != request.reward_id
                or earlier.points_deducted != reward.point_cost
            ):
                raise IdempotencyKeyConflict(
                    "This idempotency_key was used for another customer, reward or amount.",
                    idempotency_key=request.idempotency_key,
                )
            branch = await self._session.get(Branch, earlier.branch_id) if earlier.branch_id else None
            return Redeemed(earlier, branch, replayed=True)
        now = self._clock.now()
        check_available(reward, now)
        branch = await self._branch(vendor_id, reward, request.branch, default_branch)
        await self._check_limit(vendor_id, reward, found.id)
        await self._take_stock(reward)
        entry, takes = await posting.post(
            wallet,
            -reward.point_cost,
            kind=EntryType.REDEEM,
            causer=Causer(CauserType.API_CLIENT, client_id),
            reason="redemption",
        )
        redemption = await self._record(vendor_id, reward, found.id, branch, now, StoredStatus.VALID)
        redemption.idempotency_key = request.idempotency_key
        redemption.ledger_entry_id = entry.id
        redemption.remaining_balance = wallet.balance
        redemption.taken_lots = await self._lots_of(takes)
        self._session.add(redemption)
        await self._session.flush()
        return Redeemed(redemption, branch, replayed=False)

    async def _reward(self, vendor_id: int, reward_id: int) -> Reward:
        reward: Reward | None = await self._session.get(Reward, reward_id)
        if reward is None or reward.vendor_id != vendor_id:
            raise RewardNotFound("The vendor has no reward with this id.", reward_id=reward_id)
        return reward

    async def _branch(
        self, vendor_id: int, reward: Reward, key: str | None, default: BranchRef | None
    ) -> Branch | None:
        """Branch rules 1 to 3, and BRANCH_INACTIVE for a credential whose default branch closed."""
        branch: Branch | None = None
        if key is not None:
            branch = await self._session.scalar(
                select(Branch).where(Branch.vendor_id == vendor_id, Branch.external_id == key)
            )
            if branch is None:
                raise BranchNotFound("No branch of the vendor has this key.", branch=key)
        elif default is not None:
            if not default.active:
                raise BranchInactive("The credential's default branch is closed.", branch=default.external_id)
            branch = await self._session.get(Branch, default.id)
        allowed = set(
            (
                await self._session.scalars(
                    select(RewardBranch.branch_id).where(
                        RewardBranch.vendor_id == vendor_id, RewardBranch.reward_id == reward.id
                    )
                )
            ).all()
        )
        if allowed and (branch is None or branch.id not in allowed):
            raise e.BranchRequired("The reward may be redeemed only at one of its branches.", reward_id=reward.id)
        return branch

    async def _check_limit(self, vendor_id: int, reward: Reward, customer_id: int) -> None:
        if reward.max_redemptions_per_customer is None:
            return
        held = await self._session.scalar(
            select(func.count())
            .select_from(Redemption)
            .where(
                Redemption.vendor_id == vendor_id,
                Redemption.reward_id == reward.id,
                Redemption.customer_id == customer_id,
                Redemption.status != StoredStatus.CANCELLED,
            )
        )
        if (held or 0) >= reward.max_redemptions_per_customer:
            raise e.RedemptionLimitReached(
                "The customer reached this reward's limit.", limit=reward.max_redemptions_per_customer
            )

    async def _take_stock(self, reward: Reward) -> None:
        if reward.total_stock is None:
            return
        taken = await self._session.scalar(
            update(Reward)
            .where(Reward.id == reward.id, Reward.remaining_stock > 0)
            .values(remaining_stock=Reward.remaining_stock - 1)
            .returning(Reward.remaining_stock),
            execution_options={"synchronize_session": False},
        )
        if taken is None:
            raise e.OutOfStock("The reward is out of stock.", reward_id=reward.id)

    async def _record(
        self, vendor_id: int, reward: Reward, customer_id: int, branch: Branch | None, now: datetime, status: str
    ) -> Redemption:
        prefix = await self._session.scalar(select(Vendor.code_prefix).where(Vendor.id == vendor_id)) or "CODE"
        while True:
            code = new_code(prefix)
            taken = await self._session.scalar(
                select(Redemption.id).where(Redemption.vendor_id == vendor_id, Redemption.confirmation_code == code)
            )
            if taken is None:
                break
        hours = reward.code_valid_for_hours
        return Redemption(
            vendor_id=vendor_id,
            reward_id=reward.id,
            customer_id=customer_id,
            branch_id=branch.id if branch else None,
            confirmation_code=code,
            status=status,
            points_deducted=reward.point_cost,
            reward_name=reward.name,
            reward_type=reward.type,
            discount_type=reward.discount_type,
            discount_value=reward.discount_value,
            product_reference=reward.product_reference,
            payment_amount=reward.payment_amount,
            redeemed_at=now,
            expires_at=now + timedelta(hours=hours) if hours else None,
            created_at=now,
            updated_at=now,
        )

    async def _lots_of(self, takes: list[ledger.Take]) -> list[list[object]]:
        ends = {
            lot.id: lot.expires_at
            for lot in (
                await self._session.scalars(select(PointLot).where(PointLot.id.in_([t.lot_id for t in takes])))
            ).all()
        }
        return [[t.points, end.isoformat() if (end := ends[t.lot_id]) else None] for t in takes]


def check_available(reward: Reward, now: datetime) -> None:
    """Deleted, inactive or out of its window (whole UTC dates, inclusive): REWARD_UNAVAILABLE."""
    today = now.date()
    if (
        reward.deleted_at is not None
        or reward.status != RewardStatus.ACTIVE
        or (reward.available_from is not None and today < reward.available_from)
        or (reward.available_until is not None and today > reward.available_until)
    ):
        raise e.RewardUnavailable("The reward cannot be redeemed now.", reward_id=reward.id)
