"""A till's redemption as prepared psycopg statements (REDEEM-1 to REDEEM-7, REDEEM-13), with the
rules and the order of checks of ``RedemptionService``, without the ORM's unit of work, in the
till's write protocol (``wallet/till_protocol.py``).

Two round trips for a new redemption, on the request's one connection:
1. One pipeline: ``BEGIN``, the key's transaction lock (a concurrent duplicate waits here, then
   finds the first one's row and answers its replay), the customer's wallet row locked (found
   through the identifier's unique index), then one statement that reads, in a snapshot taken after
   those locks were granted, everything the rules need: customer and wallet, the reward with its
   branches, the branch, the key's earlier redemption, the customer's count for the reward's limit,
   the wallet's open lots and the vendor's code prefix (``till_redeem_state``). Every write that
   changes a wallet's lots or its customer's redemptions holds the wallet row, so nothing read here
   can move before this transaction ends.
2. After the checks in Python: one statement pipelined with ``COMMIT`` that takes the stock with a
   conditional update (racing redemptions never take it below 0) and, only when it was taken,
   writes the ``redeem`` entry, the lots it consumes (soonest-ending first), the balance, the
   redemption and its ``redemption.created`` event (EVENT-5). A new code that collides with an
   existing one (ON CONFLICT) undoes the attempt, which then runs again with another code. The
   ledger's one writer builds that statement (``till_posting.posting_statement``): the stock take
   goes before its posting and gates it, the redemption's rows after it.
A refusal rolls back before step 2 and writes nothing, leaving its key free.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from loyalty_core.customers.errors import CustomerDeactivated, CustomerNotFound
from loyalty_core.customers.models import CustomerStatus
from loyalty_core.errors import IdempotencyKeyConflict
from loyalty_core.events.services.recording import deliveries_of, dumps, event_ctes, new_event_id, payload_sql
from loyalty_core.redemptions import errors as e
from loyalty_core.redemptions import rules
from loyalty_core.redemptions.events import RedemptionCreated
from loyalty_core.redemptions.models import StoredStatus
from loyalty_core.redemptions.rules import new_code
from loyalty_core.redemptions.services import RedeemRequest
from loyalty_core.redemptions.till_redeem_state import LOCKS, STATE, LockedRow, RedeemRead, RewardRow, StateRow
from loyalty_core.redemptions.till_verify import BranchLabel, RedemptionView, read_view
from loyalty_core.rewards.errors import RewardNotFound
from loyalty_core.tenancy.errors import BranchInactive, BranchNotFound
from loyalty_core.tenancy.rules.access import BranchRef
from loyalty_core.till_sql import bound, statements_of
from loyalty_core.wallet.errors import InsufficientBalance, NoWallet
from loyalty_core.wallet.models import CauserType, EntryType
from loyalty_core.wallet.rules import split_due, take
from loyalty_core.wallet.till_pending import Made, is_due, make_available
from loyalty_core.wallet.till_posting import LEDGER_EVENTS, PostingParams, entry_params, posting_statement
from loyalty_core.wallet.till_protocol import RunAgain, same_wallet, till_write

SQL = statements_of(__name__)

REDEEM_REASON = "redemption"


class RedeemWrite(PostingParams, frozen=True):
    """The write's parameters: the posting's, then the stock take's, the redemption's and its event's."""

    customer_id: int
    reward_id: int
    idempotency_key: str
    branch_id: int | None
    stock_limited: bool
    point_cost: int
    taken_lots: Jsonb
    code: str
    reward_name: str
    reward_type: str
    discount_type: str | None
    discount_value: int | None
    product_reference: str | None
    payment_amount: int
    expires_at: datetime | None
    redeem_event_id: str
    redeem_event_data: str


_WRITE = SQL(
    "write",
    posting_statement(
        before=(
            """stock AS (
    UPDATE rewards SET remaining_stock = remaining_stock - 1, updated_at = %(now)s
    WHERE vendor_id = %(vendor_id)s AND id = %(reward_id)s AND remaining_stock > 0 AND %(stock_limited)s
    RETURNING id
)""",
            """go AS (
    SELECT 1 AS ok WHERE NOT %(stock_limited)s OR EXISTS (SELECT 1 FROM stock)
)""",
        ),
        gate="EXISTS (SELECT 1 FROM go)",
        after=(
            f"""made AS (
    INSERT INTO redemptions
        (id, vendor_id, reward_id, customer_id, branch_id, confirmation_code, status, idempotency_key,
         points_deducted, remaining_balance, ledger_entry_id, taken_lots, reward_name, reward_type,
         discount_type, discount_value, product_reference, payment_amount, redeemed_at, expires_at,
         created_at, updated_at)
    SELECT nextval('redemptions_id_seq'), %(vendor_id)s, %(reward_id)s, %(customer_id)s, %(branch_id)s, %(code)s,
           '{StoredStatus.VALID}', %(idempotency_key)s, %(point_cost)s, e.running_balance, e.id, %(taken_lots)s,
           %(reward_name)s, %(reward_type)s, %(discount_type)s, %(discount_value)s, %(product_reference)s,
           %(payment_amount)s, %(now)s, %(expires_at)s, %(now)s, %(now)s
    FROM ledger_entry e
    ON CONFLICT (vendor_id, confirmation_code) DO NOTHING
    RETURNING id
)""",
            event_ctes(
                "redeem_event",
                source="made",
                data="jsonb_set(CAST(%(redeem_event_data)s AS jsonb), '{redemption_id}', to_jsonb(made.id))",
                customer="CAST(%(customer_id)s AS bigint)",
                vendor="%(vendor_id)s",
                at="%(now)s",
                **payload_sql(RedemptionCreated),
            ),
        ),
        select=f"(SELECT ok FROM go), (SELECT id FROM made), {deliveries_of('redeem_event', *LEDGER_EVENTS)}",
    ),
    RedeemWrite,
)


@dataclass(frozen=True, slots=True)
class TillRedeemed:
    redemption: RedemptionView
    remaining_balance: int
    replayed: bool
    deliveries: int = 0
    """The webhook deliveries its events created: the caller wakes the worker after the commit."""


async def till_redeem(
    conn: AsyncConnection[Any],
    vendor_id: int,
    request: RedeemRequest,
    *,
    default_branch: BranchRef | None,
    client_id: str,
    now: datetime,
) -> TillRedeemed:
    """``conn`` is out of autocommit; each attempt is one transaction on it (a savepoint when the
    caller holds one open)."""
    read = RedeemRead(
        vendor_id=vendor_id,
        identifier=request.identifier,
        reward_id=request.reward_id,
        idempotency_key=request.idempotency_key,
        branch_key=request.branch,
        default_branch_id=default_branch.id if request.branch is None and default_branch is not None else None,
        not_counted=str(rules.NOT_COUNTED),
        now=now,
    )
    return await till_write(partial(_attempt, conn, vendor_id, request, bound(read), default_branch, client_id, now))


async def _attempt(
    conn: AsyncConnection[Any],
    vendor_id: int,
    request: RedeemRequest,
    params: dict[str, Any],
    default_branch: BranchRef | None,
    client_id: str,
    now: datetime,
) -> TillRedeemed:
    """One attempt, one transaction: ``params`` a bound :class:`RedeemRead`."""
    async with (
        conn.pipeline() as pipeline,
        conn.transaction(),
        conn.cursor(row_factory=class_row(LockedRow)) as locked,
        conn.cursor(row_factory=class_row(StateRow)) as read,
    ):
        await LOCKS.take(conn, params, locked)
        await read.execute(STATE, params, prepare=True)
        await pipeline.sync()
        locked_row = await locked.fetchone()
        state = await read.fetchone()
        assert state is not None  # the vendor of an authenticated caller exists
        customer_id, wallet_id, balance = state.customer_id, state.wallet_id, state.balance or 0
        if customer_id is None:
            raise CustomerNotFound("No customer of the vendor has this identifier.")
        if state.customer_status == CustomerStatus.DEACTIVATED:
            raise CustomerDeactivated("The customer is deactivated.", customer_id=customer_id)
        if wallet_id is None:
            raise NoWallet("The customer has no wallet to spend points from.", customer_id=customer_id)
        # a merge moved the card between the lock and the read: run again under the right lock
        same_wallet(None if locked_row is None else locked_row.wallet_id, wallet_id)
        available = Made()
        if is_due(state.pending_next_at, now):
            # PENDING-5: points that became available are written first, and the state read again
            available = await make_available(conn, vendor_id, wallet_id, now)
            await read.execute(STATE, params, prepare=True)
            await pipeline.sync()
            state = await read.fetchone()
            assert state is not None
            balance = state.balance or 0
        if state.reward_id is None:
            raise RewardNotFound("The vendor has no reward with this id.", reward_id=request.reward_id)
        reward = state.reward()
        if state.earlier_id is not None:
            return await _replay(conn, vendor_id, request, customer_id, reward, state)
        rules.check_available(reward, now)
        branch = _branch(request, default_branch, reward, state.reward_branches, state.branch())
        if state.min_tier is not None:
            rules.check_tier(reward.id, state.min_tier, state.tier, now)
        rules.check_limit(reward.max_redemptions_per_customer, state.held or 0)
        rules.check_stock(reward.id, reward.total_stock, reward.remaining_stock)
        lots = state.lots()
        # points past their end are never spent: the write expires them first, in its statement
        expired, live = split_due(lots, now)
        balance -= sum(t.points for t in expired)
        if balance < reward.point_cost:
            raise InsufficientBalance(
                "The balance is too low for this deduction.", balance=balance, amount=-reward.point_cost
            )
        takes = take(live, reward.point_cost)
        ends = {lot.id: lot.expires_at for lot in lots}
        code = new_code(state.code_prefix or "CODE")
        until = rules.code_expiry(now, reward.code_valid_for_hours)
        view = RedemptionView(
            id=0,
            confirmation_code=code,
            status=StoredStatus.VALID,
            reward_id=reward.id,
            reward_name=reward.name,
            reward_type=reward.type,
            customer_id=customer_id,
            points_deducted=reward.point_cost,
            branch=BranchLabel(branch.external_id, branch.name, branch.type) if branch is not None else None,
            redeemed_at=now,
            expires_at=until,
            used_at=None,
            cancelled_at=None,
            discount_type=reward.discount_type,
            discount_value=reward.discount_value,
            product_reference=reward.product_reference,
            payment_amount=reward.payment_amount,
        )
        posting = entry_params(
            vendor_id=vendor_id,
            wallet_id=wallet_id,
            kind=EntryType.REDEEM,
            amount=-reward.point_cost,
            causer_type=CauserType.API_CLIENT,
            causer_id=client_id,
            now=now,
            reason=REDEEM_REASON,
            taken=takes,
            expired=expired,
        )
        to_write = RedeemWrite(
            **bound(posting),
            customer_id=customer_id,
            reward_id=reward.id,
            idempotency_key=request.idempotency_key,
            branch_id=branch.id if branch is not None else None,
            stock_limited=reward.total_stock is not None,
            point_cost=reward.point_cost,
            taken_lots=Jsonb(rules.consumed_lots(takes, ends)),
            code=code,
            reward_name=reward.name,
            reward_type=reward.type,
            discount_type=reward.discount_type,
            discount_value=reward.discount_value,
            product_reference=reward.product_reference,
            payment_amount=reward.payment_amount,
            expires_at=until,
            redeem_event_id=new_event_id(now),
            redeem_event_data=dumps(RedemptionCreated.of(view, now)),
        )
        written = await conn.execute(_WRITE, bound(to_write), prepare=True)
        await pipeline.sync()
        took, made, deliveries = await written.fetchone() or (None, None, 0)
        if took is None:
            raise e.OutOfStock("The reward is out of stock.", reward_id=reward.id)
        if made is None:
            raise RunAgain  # the new code exists already: draw another
    return TillRedeemed(
        replace(view, id=made),
        balance - reward.point_cost,
        replayed=False,
        deliveries=deliveries + available.deliveries,
    )


async def _replay(
    conn: AsyncConnection[Any],
    vendor_id: int,
    request: RedeemRequest,
    customer_id: int,
    reward: RewardRow,
    earlier: StateRow,
) -> TillRedeemed:
    """The key's first redemption, answered as it was created; another customer, reward or cost
    under the same key is a conflict (REDEEM-3)."""
    if (
        earlier.earlier_customer_id != customer_id
        or earlier.earlier_reward_id != request.reward_id
        or earlier.earlier_points != reward.point_cost
    ):
        raise IdempotencyKeyConflict(
            "This idempotency_key was used for another customer, reward or amount.",
            idempotency_key=request.idempotency_key,
        )
    assert earlier.earlier_code is not None
    assert earlier.earlier_remaining is not None
    view = await read_view(conn, vendor_id, earlier.earlier_code)
    assert view is not None  # the key's row was just read in this transaction
    return TillRedeemed(view, earlier.earlier_remaining, replayed=True)


def _branch(
    request: RedeemRequest,
    default: BranchRef | None,
    reward: RewardRow,
    allowed: list[int] | None,
    branch: BranchRef | None,
) -> BranchRef | None:
    """REDEEM-7 (the branch chain, BRANCH_NOT_FOUND), and BRANCH_INACTIVE for a closed default branch."""
    if request.branch is not None and branch is None:
        raise BranchNotFound("No branch of the vendor has this key.", branch=request.branch)
    if request.branch is None and default is not None and not default.active:
        raise BranchInactive("The credential's default branch is closed.", branch=default.external_id)
    if allowed and (branch is None or branch.id not in allowed):
        raise e.BranchRequired("The reward may be redeemed only at one of its branches.", reward_id=reward.id)
    return branch
