"""The admin portal's redemption actions: cancel a redemption, give a reward at the counter
(REDEEM-10 to REDEEM-12).

Cancel locks the redemption row first, so it and a till's verify (a conditional update of the same
row) run one after the other, and two cancels cannot both return the points. Give follows the till's
write protocol (``wallet/till_protocol.py``): the wallet's lock first (a give has no key), then
the customer's state and everything else it decides on, read under that lock.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial

from sqlalchemy import select, update

from loyalty_core.customers.errors import CustomerDeactivated, CustomerNotFound
from loyalty_core.customers.models import Customer, CustomerStatus
from loyalty_core.events.recording import record_event
from loyalty_core.redemptions import errors as e
from loyalty_core.redemptions.models import Redemption, StoredStatus, shown_status
from loyalty_core.redemptions.payloads import (
    RedemptionCancelled,
    RedemptionCreated,
    RedemptionPayload,
    RedemptionUsed,
)
from loyalty_core.redemptions.resources import row_view
from loyalty_core.redemptions.rules import check_available
from loyalty_core.redemptions.services import RedemptionService
from loyalty_core.rewards.models import Reward
from loyalty_core.tenancy.models import Branch
from loyalty_core.wallet.errors import WalletNotFound
from loyalty_core.wallet.models import Causer, EntryType, Wallet
from loyalty_core.wallet.services.posting import Posting
from loyalty_core.wallet.till_protocol import till_write

CANCEL_REASON = "redemption_cancelled"


class PortalRedemptions(RedemptionService):
    async def cancel(self, vendor_id: int, code: str, *, causer: Causer) -> tuple[Redemption, Branch | None]:
        """valid or used -> cancelled: the points come back as an ``adjust`` entry re-creating the
        consumed lots with their original end dates, and the stock comes back, exactly once."""
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
            wallet, redemption.points_deducted, kind=EntryType.ADJUST, causer=causer, reason=CANCEL_REASON, lots=lots
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
