"""Redemption writes outside the till's statements: what a redemption's checks and writes share
between the till and the portal (REDEEM-1, REDEEM-5), and the admin portal's actions, cancel a
redemption and give a reward at the counter (REDEEM-10 to REDEEM-12).

A till's redemption runs as prepared statements in ``till_redeem``, its verify and read of a code
in ``till_verify``; the portal's give and cancel (:class:`PortalRedemptions`) run on the ORM
session with the helpers of :class:`RedemptionService`: the customer's wallet row locked first, so
the per-customer limit and the balance are exact, and stock taken by a conditional update that
never passes 0. Every refusal raises before the transaction commits, so it writes nothing.

Cancel locks the redemption row first, so it and a till's verify (a conditional update of the same
row) run one after the other, and two cancels cannot both return the points. Give follows the till's
write protocol (``wallet/till_protocol.py``): the wallet's lock first (a give has no key), then
the customer's state and everything else it decides on, read under that lock."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import partial

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.customers.errors import CustomerDeactivated, CustomerNotFound
from loyalty_core.customers.models import Customer, CustomerStatus
from loyalty_core.events.services.recording import record_event
from loyalty_core.redemptions import errors as e
from loyalty_core.redemptions import rules
from loyalty_core.redemptions.events import RedemptionCancelled, RedemptionCreated, RedemptionPayload, RedemptionUsed
from loyalty_core.redemptions.models import Redemption, StoredStatus, shown_status
from loyalty_core.redemptions.resources import row_view
from loyalty_core.redemptions.rules import check_available, new_code
from loyalty_core.rewards.errors import RewardNotFound
from loyalty_core.rewards.models import Reward
from loyalty_core.tenancy.models import Branch, Vendor
from loyalty_core.tiers.till_months import tier_facts_of
from loyalty_core.wallet.errors import WalletNotFound
from loyalty_core.wallet.models import Causer, EntryType, PointLot, Wallet
from loyalty_core.wallet.rules import Take
from loyalty_core.wallet.services.posting import Posting
from loyalty_core.wallet.till_protocol import till_write


@dataclass(frozen=True, slots=True)
class RedeemRequest:
    identifier: str
    reward_id: int
    idempotency_key: str
    branch: str | None = None
    """The payload's branch key; None falls back to the credential's default (REDEEM-7)."""


class RedemptionService:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def _reward(self, vendor_id: int, reward_id: int) -> Reward:
        reward: Reward | None = await self._session.get(Reward, reward_id)
        if reward is None or reward.vendor_id != vendor_id:
            raise RewardNotFound("The vendor has no reward with this id.", reward_id=reward_id)
        return reward

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
                Redemption.status != rules.NOT_COUNTED,
            )
        )
        rules.check_limit(reward.max_redemptions_per_customer, held or 0)

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
            expires_at=rules.code_expiry(now, reward.code_valid_for_hours),
            created_at=now,
            updated_at=now,
        )

    async def _lots_of(self, takes: list[Take]) -> list[list[object]]:
        ends = {
            lot.id: lot.expires_at
            for lot in (
                await self._session.scalars(select(PointLot).where(PointLot.id.in_([t.lot_id for t in takes])))
            ).all()
        }
        return rules.consumed_lots(takes, ends)


CANCEL_REASON = "redemption_cancelled"


class PortalRedemptions(RedemptionService):
    async def cancel(
        self, vendor_id: int, code: str, *, causer: Causer, note: str | None = None
    ) -> tuple[Redemption, Branch | None]:
        """valid or used -> cancelled: the points come back as an ``adjust`` entry re-creating the
        consumed lots with their original end dates, and the stock comes back, exactly once. A
        ``note`` (why: the portal asks for one when the reward was handed over) follows the entry's
        reason, ``redemption_cancelled: <note>``."""
        now = self._clock.now()
        redemption: Redemption | None = await self._session.scalar(
            select(Redemption)
            .where(Redemption.vendor_id == vendor_id, Redemption.confirmation_code == code.upper())
            .with_for_update()
        )
        if redemption is None:
            raise e.RedemptionNotFound("The vendor has no redemption with this code.", code=code)
        status = shown_status(redemption, now)
        if status == StoredStatus.CANCELLED:
            raise e.CodeCancelled("The redemption is already cancelled.", code=redemption.confirmation_code)
        if status == "expired":
            raise e.CodeExpired("An expired redemption cannot be cancelled.", code=redemption.confirmation_code)
        posting = Posting(self._session, self._clock)
        # the points come back to the account that holds the customer's points now (after a merge,
        # the kept one): a closed account's balance stays 0
        wallet = await posting.open_wallet(vendor_id, redemption.customer_id)
        lots = [(int(points), _when(end)) for points, end in redemption.taken_lots]
        await posting.post(
            wallet,
            redemption.points_deducted,
            kind=EntryType.ADJUST,
            causer=causer,
            reason=f"{CANCEL_REASON}: {note}" if note else CANCEL_REASON,
            lots=lots,
        )
        await self._session.execute(
            update(Reward)
            .where(
                Reward.id == redemption.reward_id,
                Reward.total_stock.is_not(None),
                Reward.remaining_stock < Reward.total_stock,
            )
            .values(remaining_stock=Reward.remaining_stock + 1),
            execution_options={"synchronize_session": False},
        )
        redemption.status = StoredStatus.CANCELLED
        redemption.cancelled_at = now
        redemption.updated_at = now
        await self._session.flush()
        branch = await self._session.get(Branch, redemption.branch_id) if redemption.branch_id else None
        # EVENT-5: the cancel's event, in its transaction (the points it gives back record none of their own)
        await self._event(RedemptionCancelled, redemption, branch, now)
        return redemption, branch

    async def give(self, vendor_id: int, reward_id: int, customer_id: int, *, causer: Causer) -> Redemption:
        """Given at the counter: every check of a redemption but the branch; born ``used``."""
        return await till_write(partial(self._give, vendor_id, reward_id, customer_id, causer))

    async def _give(self, vendor_id: int, reward_id: int, customer_id: int, causer: Causer) -> Redemption:
        posting = Posting(self._session, self._clock)
        try:
            wallet: Wallet | None = await posting.wallet_of(vendor_id, customer_id, lock=True)
        except WalletNotFound:
            wallet = None
        # read under the wallet's lock: a merge of the account committed before it, or waits for the give
        state = (
            await self._session.execute(
                select(Customer.status, Customer.merged_into_id).where(
                    Customer.vendor_id == vendor_id,
                    Customer.id == customer_id,
                    Customer.status != CustomerStatus.ANONYMIZED,
                )
            )
        ).first()
        if state is None:
            raise CustomerNotFound("No customer with this id.", customer_id=customer_id)
        if state.status == CustomerStatus.DEACTIVATED or state.merged_into_id is not None:
            raise CustomerDeactivated("The customer is deactivated.", customer_id=customer_id)
        if wallet is None:
            raise WalletNotFound("The customer has no wallet.", customer_id=customer_id)
        reward = await self._reward(vendor_id, reward_id)
        now = self._clock.now()
        check_available(reward, now)
        if reward.min_tier is not None:  # TIER-12: right after the branch, which a give has none of
            read = await tier_facts_of(self._session, vendor_id, customer_id, now)
            rules.check_tier(reward.id, reward.min_tier, read, now)
        await self._check_limit(vendor_id, reward, customer_id)
        await self._take_stock(reward)
        entry, takes = await posting.post(
            wallet, -reward.point_cost, kind=EntryType.REDEEM, causer=causer, reason="given_at_counter"
        )
        redemption = await self._record(vendor_id, reward, customer_id, None, now, StoredStatus.USED)
        redemption.used_at = now
        redemption.ledger_entry_id = entry.id
        redemption.remaining_balance = wallet.balance
        redemption.taken_lots = await self._lots_of(takes)
        self._session.add(redemption)
        await self._session.flush()
        # EVENT-5: given at the counter, the redemption is created and used at once
        await self._event(RedemptionCreated, redemption, None, now)
        await self._event(RedemptionUsed, redemption, None, now)
        return redemption

    async def _event(
        self, payload: type[RedemptionPayload], redemption: Redemption, branch: Branch | None, now: datetime
    ) -> None:
        data = payload.of(row_view(redemption, branch), now)
        await record_event(self._session, self._clock, redemption.vendor_id, data, customer_id=redemption.customer_id)


def _when(raw: str | None) -> datetime | None:
    return datetime.fromisoformat(raw) if raw else None
