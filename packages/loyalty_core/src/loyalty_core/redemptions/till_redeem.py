"""A till's redemption as prepared psycopg statements (spec: POST /redemptions, Redemption status;
contract 5 "Rewards and redemptions" and its further decisions), with the rules and the order of
checks of ``RedemptionService``, without the ORM's unit of work.

Two round trips for a new redemption, on the request's one connection:
1. One pipeline: ``BEGIN``, a transaction lock on the vendor's key (a concurrent duplicate waits
   here, then finds the first one's row and answers its replay), the customer's wallet row locked
   (found through the identifier's unique index), then one statement that reads, in a snapshot
   taken after that lock was granted, everything the rules need: customer and wallet, the reward
   with its branches, the branch, the key's earlier redemption, the customer's count for the
   reward's limit, the wallet's open lots and the vendor's code prefix. Every write that changes a
   wallet's lots or its customer's redemptions holds the wallet row, so nothing read here can move
   before this transaction ends.
2. After the checks in Python: one statement pipelined with ``COMMIT`` that takes the stock with a
   conditional update (racing redemptions never take it below 0) and, only when it was taken,
   writes the ``redeem`` entry, the lots it consumes (soonest-ending first), the balance and the
   redemption. A new code that collides with an existing one (ON CONFLICT) undoes the attempt,
   which then runs again with another code.
A refusal rolls back before step 2 and writes nothing, leaving its key free.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.errors import LockNotAvailable
from psycopg.types.json import Jsonb

from loyalty_core.customers.errors import CustomerDeactivated, CustomerNotFound
from loyalty_core.customers.finding import HOLDER_BY_IDENTIFIER
from loyalty_core.customers.models import CustomerStatus
from loyalty_core.errors import IdempotencyKeyConflict
from loyalty_core.redemptions import errors as e
from loyalty_core.redemptions import rules
from loyalty_core.redemptions.codes import new_code
from loyalty_core.redemptions.models import StoredStatus
from loyalty_core.redemptions.services import RedeemRequest
from loyalty_core.redemptions.till_verify import BranchLabel, RedemptionView, read_view
from loyalty_core.rewards.errors import RewardNotFound
from loyalty_core.tenancy.access import BranchRef
from loyalty_core.tenancy.errors import BranchInactive, BranchNotFound
from loyalty_core.wallet import ledger
from loyalty_core.wallet.errors import InsufficientBalance, WalletBusy, WalletNotFound
from loyalty_core.wallet.ledger_writes import entry_params, posting_ctes
from loyalty_core.wallet.models import CauserType, EntryType

REDEEM_REASON = "redemption"

_KEY_LOCK = "SELECT pg_advisory_xact_lock(%(v)s::int, hashtext('redemption:' || %(k)s))"

_WALLET_LOCK = f"""
WITH {HOLDER_BY_IDENTIFIER}
SELECT w.id FROM holder h
JOIN customers c ON c.vendor_id = %(v)s AND c.id = h.id AND c.status <> '{CustomerStatus.ANONYMIZED}'
JOIN wallets w ON w.vendor_id = %(v)s AND w.customer_id = c.id
FOR UPDATE OF w
"""

_STATE = f"""
WITH {HOLDER_BY_IDENTIFIER}
SELECT c.id, c.status, w.id, w.balance,
       r.id, r.deleted_at, r.status, r.available_from, r.available_until, r.point_cost, r.total_stock,
       r.remaining_stock, r.max_redemptions_per_customer, r.code_valid_for_hours, r.name, r.type,
       r.discount_type, r.discount_value, r.product_reference, r.payment_amount,
       (SELECT array_agg(rb.branch_id) FROM reward_branches rb
         WHERE rb.vendor_id = %(v)s AND rb.reward_id = r.id),
       CASE WHEN r.max_redemptions_per_customer IS NOT NULL THEN
         (SELECT count(*) FROM redemptions x
           WHERE x.vendor_id = %(v)s AND x.customer_id = c.id AND x.reward_id = r.id AND x.status <> %(not_counted)s)
       END,
       b.id, b.external_id, b.name, b.type, b.active,
       p.id, p.customer_id, p.reward_id, p.points_deducted, p.confirmation_code, p.remaining_balance,
       vendor.code_prefix, lots.ids, lots.ends, lots.rems
FROM (SELECT code_prefix FROM vendors WHERE id = %(v)s) vendor
LEFT JOIN holder h ON true
LEFT JOIN customers c ON c.vendor_id = %(v)s AND c.id = h.id AND c.status <> '{CustomerStatus.ANONYMIZED}'
LEFT JOIN wallets w ON w.vendor_id = %(v)s AND w.customer_id = c.id
LEFT JOIN rewards r ON r.vendor_id = %(v)s AND r.id = %(r)s
LEFT JOIN branches b ON b.vendor_id = %(v)s AND b.id = coalesce(
    (SELECT k.id FROM branches k WHERE k.vendor_id = %(v)s AND k.external_id = %(b)s), %(bid)s)
LEFT JOIN redemptions p ON p.vendor_id = %(v)s AND p.idempotency_key = %(k)s
LEFT JOIN LATERAL (
    SELECT array_agg(l.id) AS ids, array_agg(l.expires_at) AS ends, array_agg(l.remaining) AS rems
    FROM point_lots l WHERE l.wallet_id = w.id AND l.remaining > 0
) lots ON true
"""

# The redemption and its entry hang off ``go``, the stock take: refused, the statement writes nothing.
_WRITE = f"""
WITH stock AS (
    UPDATE rewards SET remaining_stock = remaining_stock - 1, updated_at = %(now)s
    WHERE vendor_id = %(v)s AND id = %(r)s AND remaining_stock > 0 AND %(limited)s
    RETURNING id
), go AS (
    SELECT 1 AS ok WHERE NOT %(limited)s OR EXISTS (SELECT 1 FROM stock)
), {posting_ctes(gate="EXISTS (SELECT 1 FROM go)")}, made AS (
    INSERT INTO redemptions
        (id, vendor_id, reward_id, customer_id, branch_id, confirmation_code, status, idempotency_key,
         points_deducted, remaining_balance, ledger_entry_id, taken_lots, reward_name, reward_type,
         discount_type, discount_value, product_reference, payment_amount, redeemed_at, expires_at,
         created_at, updated_at)
    SELECT nextval('redemptions_id_seq'), %(v)s, %(r)s, %(c)s, %(bid)s, %(code)s, '{StoredStatus.VALID}', %(k)s,
           %(cost)s, e.running_balance, e.id, %(lots)s, %(name)s, %(type)s,
           %(dt)s, %(dv)s, %(pref)s, %(pay)s, %(now)s, %(until)s, %(now)s, %(now)s
    FROM ledger_entry e
    ON CONFLICT (vendor_id, confirmation_code) DO NOTHING
    RETURNING id
)
SELECT (SELECT ok FROM go), (SELECT id FROM made)
"""


@dataclass(frozen=True, slots=True)
class TillRedeemed:
    redemption: RedemptionView
    remaining_balance: int
    replayed: bool


@dataclass(frozen=True, slots=True)
class _Reward:
    """The reward as ``check_available`` and the write need it (the names of ``Reward``'s columns)."""

    id: int
    deleted_at: datetime | None
    status: str
    available_from: date | None
    available_until: date | None
    point_cost: int
    total_stock: int | None
    remaining_stock: int | None
    max_redemptions_per_customer: int | None
    code_valid_for_hours: int | None
    name: str
    type: str
    discount_type: str | None
    discount_value: int | None
    product_reference: str | None
    payment_amount: int


class _Again(Exception):
    """The attempt was undone and runs again: its new code exists already, or a merge moved the
    card to another account between the wallet lock and the read."""


_ATTEMPTS = 5


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
    params: dict[str, Any] = {
        "v": vendor_id,
        "q": request.identifier,
        "r": request.reward_id,
        "k": request.idempotency_key,
        "b": request.branch,
        "bid": default_branch.id if request.branch is None and default_branch is not None else None,
        "ci": client_id,
        "not_counted": str(rules.NOT_COUNTED),
        "now": now,
    }
    for _ in range(_ATTEMPTS):
        try:
            return await _attempt(conn, vendor_id, request, params, default_branch, now)
        except _Again:
            continue
    # five collisions or merges in a row: never seen, but a clean retryable refusal, not a 500
    raise WalletBusy("The wallet is busy with another write; retry in a moment.", retry_after=1)


async def _attempt(
    conn: AsyncConnection[Any],
    vendor_id: int,
    request: RedeemRequest,
    params: dict[str, Any],
    default_branch: BranchRef | None,
    now: datetime,
) -> TillRedeemed:
    async with conn.pipeline() as pipeline, conn.transaction():
        try:
            await conn.execute(_KEY_LOCK, params, prepare=True)
            locked = await conn.execute(_WALLET_LOCK, params, prepare=True)
            state = await conn.execute(_STATE, params, prepare=True)
            await pipeline.sync()
            locked_row = await locked.fetchone()
            row = await state.fetchone()
        except LockNotAvailable as exc:
            raise WalletBusy("The wallet is busy with another write; retry in a moment.", retry_after=1) from exc
        assert row is not None  # the vendor of an authenticated caller exists
        customer_id, status, wallet_id, balance = row[0:4]
        if customer_id is None:
            raise CustomerNotFound("No customer of the vendor has this identifier.")
        if status == "deactivated":
            raise CustomerDeactivated("The customer is deactivated.", customer_id=customer_id)
        if wallet_id is None:
            raise WalletNotFound("The customer has no wallet.", customer_id=customer_id)
        if locked_row is None or locked_row[0] != wallet_id:
            # a merge moved the card between the lock and the read: run again under the right lock
            raise _Again
        if row[4] is None:
            raise RewardNotFound("The vendor has no reward with this id.", reward_id=request.reward_id)
        reward = _Reward(*row[4:20])
        if row[27] is not None:
            return await _replay(conn, vendor_id, request, customer_id, reward, row[27:33])
        rules.check_available(reward, now)
        branch = _branch(request, default_branch, reward, row[20], row[22:27])
        rules.check_limit(reward.max_redemptions_per_customer, row[21] or 0)
        rules.check_stock(reward.id, reward.total_stock, reward.remaining_stock)
        if balance < reward.point_cost:
            raise InsufficientBalance(
                "The balance is too low for this deduction.", balance=balance, amount=-reward.point_cost
            )
        lots = [ledger.Lot(i, x, left) for i, x, left in zip(row[34] or (), row[35] or (), row[36] or (), strict=True)]
        takes = ledger.take(lots, reward.point_cost)
        ends = {lot.id: lot.expires_at for lot in lots}
        code = new_code(row[33] or "CODE")
        until = rules.code_expiry(now, reward.code_valid_for_hours)
        params.update(
            entry_params(
                vendor_id=vendor_id,
                wallet_id=wallet_id,
                kind=EntryType.REDEEM,
                amount=-reward.point_cost,
                causer_type=CauserType.API_CLIENT,
                causer_id=params["ci"],
                now=now,
                reason=REDEEM_REASON,
                taken=takes,
            ),
            c=customer_id,
            w=wallet_id,
            bid=branch.id if branch is not None else None,
            limited=reward.total_stock is not None,
            cost=reward.point_cost,
            lots=Jsonb(rules.consumed_lots(takes, ends)),
            code=code,
            name=reward.name,
            type=reward.type,
            dt=reward.discount_type,
            dv=reward.discount_value,
            pref=reward.product_reference,
            pay=reward.payment_amount,
            until=until,
        )
        written = await conn.execute(_WRITE, params, prepare=True)
        await pipeline.sync()
        took, made = await written.fetchone() or (None, None)
        if took is None:
            raise e.OutOfStock("The reward is out of stock.", reward_id=reward.id)
        if made is None:
            raise _Again
    view = RedemptionView(
        id=made,
        confirmation_code=code,
        status="valid",
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
    return TillRedeemed(view, balance - reward.point_cost, replayed=False)


async def _replay(
    conn: AsyncConnection[Any],
    vendor_id: int,
    request: RedeemRequest,
    customer_id: int,
    reward: _Reward,
    earlier: tuple[Any, ...],
) -> TillRedeemed:
    """The key's first redemption, answered as it was created; another customer, reward or cost
    under the same key is a conflict (contract 5)."""
    _, earlier_customer, earlier_reward, points, code, remaining = earlier
    if earlier_customer != customer_id or earlier_reward != request.reward_id or points != reward.point_cost:
        raise IdempotencyKeyConflict(
            "This idempotency_key was used for another customer, reward or amount.",
            idempotency_key=request.idempotency_key,
        )
    view = await read_view(conn, vendor_id, code)
    assert view is not None  # the key's row was just read in this transaction
    return TillRedeemed(view, remaining, replayed=True)


def _branch(
    request: RedeemRequest,
    default: BranchRef | None,
    reward: _Reward,
    allowed: list[int] | None,
    found: tuple[Any, ...],
) -> BranchRef | None:
    """Branch rules 1 to 3, and BRANCH_INACTIVE for a credential whose default branch closed."""
    branch = BranchRef(*found) if found[0] is not None else None
    if request.branch is not None and branch is None:
        raise BranchNotFound("No branch of the vendor has this key.", branch=request.branch)
    if request.branch is None and default is not None and not default.active:
        raise BranchInactive("The credential's default branch is closed.", branch=default.external_id)
    if allowed and (branch is None or branch.id not in allowed):
        raise e.BranchRequired("The reward may be redeemed only at one of its branches.", reward_id=reward.id)
    return branch
