"""A till's purchase as prepared psycopg statements (EARN-1 to EARN-14, MERGE-8), in the till's
write protocol (``wallet/till_protocol.py``).

Two round trips for a new purchase, whatever its lines and rules:
1. ``BEGIN``, the key's transaction lock (a concurrent duplicate waits here, then finds the first
   one's row and answers its replay), the lock of the wallet the identifier finds (a merge of its
   account waits for the purchase, or committed before the read: the points always land on the
   account that holds the card; a card moved in between runs the attempt again), and one statement,
   read after both locks, that finds the customer through the identifier's unique index, the branch,
   the key's earlier transaction, the vendor's terms version and, when moment campaigns exist, the
   customer family's moment facts (``till_purchase_find``).
2. After scoring in Python: the write, pipelined with ``COMMIT`` (``till_purchase_write``).
Refusals raise before step 2, which writes nothing. A replay writes nothing and is never metered.
The branch is resolved once, where the checks need it, and the write and the answer take it from
there.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import partial
from typing import Any

from psycopg import AsyncConnection
from psycopg.errors import DeadlockDetected

from loyalty_core.customers.errors import CustomerDeactivated, CustomerNotFound
from loyalty_core.customers.models import CustomerStatus
from loyalty_core.earning import till_meter
from loyalty_core.earning.errors import PlanLimitExceeded
from loyalty_core.earning.rules.engine import Scoring, score
from loyalty_core.earning.rules.terms import CampaignTerms, Family, LineItem, Purchase
from loyalty_core.earning.till_purchase_find import Found, PurchaseFind, find, same_family
from loyalty_core.earning.till_purchase_reads import (
    Item,
    TransactionView,
    transaction_by_id,
)
from loyalty_core.earning.till_purchase_write import purchase_write, write
from loyalty_core.earning.till_terms import TermsCache, paying
from loyalty_core.earning.till_tier_moves import record_lapse, tier_move
from loyalty_core.errors import IdempotencyKeyConflict
from loyalty_core.referrals.rules import completion
from loyalty_core.referrals.till_complete import complete_params
from loyalty_core.tenancy.errors import BranchInactive, BranchNotFound
from loyalty_core.tenancy.rules.access import BranchRef, VendorContext
from loyalty_core.tiers.rules import month_of
from loyalty_core.tiers.till_months import standing_from_read
from loyalty_core.till_sql import bound
from loyalty_core.wallet.errors import WalletBusy, WalletNotFound
from loyalty_core.wallet.till_pending import is_due, make_available
from loyalty_core.wallet.till_protocol import ATTEMPTS, BUSY, RunAgain, till_write


@dataclass(frozen=True, slots=True)
class Line:
    name: str
    quantity: int
    unit_price: int
    sku: str | None = None
    category: str | None = None


@dataclass(frozen=True, slots=True)
class PurchaseRequest:
    identifier: str
    total_amount: int
    branch: str | None = None
    """The payload's branch key; None falls back to the credential's default branch."""
    description: str | None = None
    external_reference: str | None = None
    items: tuple[Line, ...] = ()


@dataclass(frozen=True, slots=True)
class Submitted:
    transaction: TransactionView
    created: bool
    """False for a replay: the original transaction, nothing written."""
    deliveries: int = 0
    """The webhook deliveries its event created: the caller wakes the worker after the commit."""


@dataclass(frozen=True, slots=True)
class Preview:
    customer_id: int
    scoring: Scoring


@dataclass(frozen=True, slots=True)
class _Scored:
    """What round trip 1 found, the branch the purchase is made at (resolved once) and its score:
    None for a replay, which is compared, not scored."""

    found: Found
    branch: BranchRef | None
    scoring: Scoring | None


def period_of(now: datetime) -> date:
    """EARN-9: the meter's period is the calendar month in UTC."""
    return now.astimezone(UTC).date().replace(day=1)


def hard_limit(max_transactions: int, overage_percent: int) -> int:
    """EARN-9: ``floor(max * (100 + overage) / 100)``."""
    return max_transactions * (100 + overage_percent) // 100


class Purchases:
    """The till's purchase path over one connection; one instance per process (it holds the terms
    cache)."""

    def __init__(self, terms: TermsCache | None = None, *, lease: timedelta = till_meter.LEASE) -> None:
        self._terms = terms or TermsCache()
        self.allowance = till_meter.Allowance(lease=lease)
        """The units of metered vendors' allowances this process holds (EARN-17, EARN-18)."""

    async def submit(
        self,
        conn: AsyncConnection[Any],
        vendor: VendorContext,
        request: PurchaseRequest,
        *,
        key: str,
        now: datetime,
    ) -> Submitted:
        """``conn`` is out of autocommit; the purchase is one transaction on it. A purchase that
        completes a referral runs again, whole, when a merge of the referrer moved the referral
        after round trip 1 or deadlocked with the completion (REFERRAL-18): each attempt was rolled
        back and gave its unit back."""
        for _ in range(ATTEMPTS):
            try:
                return await self._submit(conn, vendor, request, key=key, now=now)
            except (RunAgain, DeadlockDetected):
                continue
        raise WalletBusy(BUSY, retry_after=1)

    async def _submit(
        self,
        conn: AsyncConnection[Any],
        vendor: VendorContext,
        request: PurchaseRequest,
        *,
        key: str,
        now: datetime,
    ) -> Submitted:
        params = _find_params(vendor, request, key, now)
        plan, period = vendor.plan, period_of(now)
        hard = hard_limit(plan.max_transactions, plan.overage_percent)
        metered = plan.max_transactions > 0
        # EARN-15: a unit of the allowance taken ahead, so the meter's row is not held to the commit
        lease = await self.allowance.take(conn, vendor.vendor_id, period, hard) if metered else None
        try:
            # the protocol: each attempt is the transaction's first round trip; a moved card rolls it back
            attempt = partial(self._find_and_score, conn, vendor, request, params, now, replayable=True)
            scored = await till_write(attempt, undo=conn.rollback)
            found = scored.found
            if found.earlier_id is not None:
                if found.earlier_total != request.total_amount or not await same_family(conn, vendor, found):
                    raise IdempotencyKeyConflict(
                        "This idempotency_key was used for another customer or total_amount.", idempotency_key=key
                    )
                view = await transaction_by_id(conn, vendor.vendor_id, found.earlier_id)
                await conn.commit()
                if lease is not None:
                    await self.allowance.give_back(conn, vendor.vendor_id, period, hard, lease)
                return Submitted(view, created=False)
            assert scored.scoring is not None
            made = 0
            if found.wallet_id is not None and is_due(found.pending_next_at, now):
                # PENDING-5: the points that became available are written first, under the wallet's lock
                made = (await make_available(conn, vendor.vendor_id, found.wallet_id, now)).deliveries
            # TIER-19: a lapse the clock made this month, recorded once (no round trip unless there is one)
            made += await record_lapse(conn, vendor.vendor_id, found.customer_id or 0, found.tier, now)
            # at the limit no unit was reserved (and a lease taken back meanwhile is gone): the write
            # moves the meter, which refuses it there
            to_write = purchase_write(
                vendor,
                customer_id=found.customer_id or 0,
                wallet_id=found.wallet_id,
                branch=scored.branch,
                scoring=scored.scoring,
                key=key,
                total_amount=request.total_amount,
                description=request.description,
                external_reference=request.external_reference,
                lines=[(i.name, i.sku, i.quantity, i.unit_price, i.category) for i in request.items],
                now=now,
                period=period,
                hard_limit=hard,
                metered=metered,
                lease_id=lease,
            )
            # TIER-18: the tier before and after, from the facts the find read; an event only on a move
            moved = tier_move(found.tier, month_of(now), request.total_amount, to_write.points_earned)
            # REFERRAL-11: a first qualifying purchase completes its referral in the same transaction
            decided = completion(found.referral, request.total_amount)
            referral = None
            if decided is not None and found.referral is not None and found.wallet_id is not None:
                referral = complete_params(
                    vendor,
                    found.referral,
                    decided,
                    referee_id=found.customer_id or 0,
                    referee_wallet_id=found.wallet_id,
                    key=key,
                    now=now,
                )
            written = await write(conn, to_write, moved=moved, referral=referral)
        except BaseException:
            await conn.rollback()
            if lease is not None:
                await self.allowance.give_back(conn, vendor.vendor_id, period, hard, lease)
            raise
        if written is None:
            raise PlanLimitExceeded("The plan's transactions for this month are used up.")
        transaction_id, item_ids, deliveries = written
        deliveries += made
        view = _view(request, scored, key, now, transaction_id, item_ids or [], vendor.pending_days)
        return Submitted(view, created=True, deliveries=deliveries)

    async def preview(
        self, conn: AsyncConnection[Any], vendor: VendorContext, request: PurchaseRequest, *, now: datetime
    ) -> Preview:
        """EARN-11: scored exactly as a submission would be now; writes and counts nothing.
        ``conn`` is in autocommit: one statement, and the terms when the cache lacks them."""
        scored = await self._find_and_score(
            conn, vendor, request, _find_params(vendor, request, None, now), now, replayable=False
        )
        assert scored.scoring is not None
        assert scored.found.customer_id is not None
        return Preview(scored.found.customer_id, scored.scoring)

    async def _find_and_score(
        self,
        conn: AsyncConnection[Any],
        vendor: VendorContext,
        request: PurchaseRequest,
        params: dict[str, Any],
        now: datetime,
        *,
        replayable: bool,
    ) -> _Scored:
        """The checks in order: customer, branch key, replay, customer state, branch state. A
        replay (``replayable`` only) comes back unscored for the caller to compare. ``params``: a
        bound :class:`PurchaseFind`."""
        cached = self._terms.peek(vendor.vendor_id)
        with_facts = cached is None or _needs_facts(vendor, cached.campaigns)
        found = await find(conn, params, with_facts=with_facts, lock=replayable)
        terms = await self._terms.terms(conn, vendor.vendor_id, found.terms_version)
        campaigns = paying(terms.campaigns, transaction=vendor.plan.campaigns, moments=vendor.plan.customer_moments)
        if not with_facts and _needs_facts(vendor, campaigns):
            found = await find(conn, params, with_facts=True, lock=False)
        if found.customer_id is None:
            raise CustomerNotFound("No customer of the vendor has this identifier.")
        if request.branch is not None and found.branch is None:
            raise BranchNotFound("No branch of the vendor has this key.", branch=request.branch)
        # the branch chain: the payload's key, else the credential's default branch, else none
        branch = found.branch if request.branch is not None else vendor.default_branch
        if replayable and found.earlier_id is not None:
            return _Scored(found, branch, None)
        if found.status == CustomerStatus.DEACTIVATED:
            raise CustomerDeactivated("The customer is deactivated.", customer_id=found.customer_id)
        if branch is not None and not branch.active:
            raise BranchInactive("The branch is closed to new transactions.", branch=branch.external_id)
        if found.wallet_id is None:
            raise WalletNotFound("The customer has no wallet.", customer_id=found.customer_id)
        purchase = Purchase(
            request.total_amount,
            branch.external_id if branch is not None else None,
            tuple(LineItem(line.quantity, line.sku) for line in request.items),
        )
        # TIER-9: the tier held before this purchase earns its bonus
        standing = standing_from_read(found.tier, now)
        tier = standing.rung if standing is not None else None
        return _Scored(found, branch, score(purchase, found.facts, terms.earn_rules, campaigns, now, tier))


def _view(
    request: PurchaseRequest,
    scored: _Scored,
    key: str,
    now: datetime,
    transaction_id: int,
    item_ids: list[int],
    pending_days: int,
) -> TransactionView:
    """The new transaction as written, with the ids the write drew."""
    assert scored.scoring is not None
    items = tuple(
        Item(
            item_id,
            line.name,
            line.sku,
            line.quantity,
            line.unit_price,
            line.quantity * line.unit_price,
            line.category,
        )
        for item_id, line in zip(item_ids, request.items, strict=True)
    )
    return TransactionView(
        id=transaction_id,
        customer_id=scored.found.customer_id or 0,
        idempotency_key=key,
        total_amount=request.total_amount,
        description=request.description,
        external_reference=request.external_reference,
        branch=scored.branch,
        created_at=now,
        points_earned=scored.scoring.points_earned,
        rules_applied=scored.scoring.entries(),
        items=items,
        points_available_at=now + timedelta(days=pending_days),
    )


def _needs_facts(vendor: VendorContext, campaigns: tuple[CampaignTerms, ...] | list[CampaignTerms]) -> bool:
    return vendor.plan.customer_moments and any(c.family == Family.CUSTOMER_MOMENT for c in campaigns)


def _find_params(vendor: VendorContext, request: PurchaseRequest, key: str | None, now: datetime) -> dict[str, Any]:
    return bound(
        PurchaseFind(
            vendor_id=vendor.vendor_id,
            identifier=request.identifier,
            branch_key=request.branch,
            idempotency_key=key,
            now=now,
        )
    )
