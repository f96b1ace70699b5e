"""A till's purchase as prepared psycopg statements (EARN-1 to EARN-14,
MERGE-8).

Two round trips for a new purchase, whatever its lines and rules:
1. ``BEGIN``, a transaction lock on the vendor's key (a concurrent duplicate waits here, then finds
   the first one's row and answers its replay), the lock of the wallet the identifier finds (a
   merge of its account waits for the purchase, or committed before the read: the points always
   land on the account that holds the card; a card moved in between runs the attempt again), and
   one statement, read after both locks, that finds the customer through the identifier's unique
   index, the branch, the key's earlier transaction, the vendor's terms version and, when moment
   campaigns exist, the customer family's moment facts.
2. After scoring in Python: one statement that moves the plan's meter (a conditional upsert: racing
   purchases never pass the hard limit), credits the wallet, writes the entry, its lot, the
   transaction, its lines, the moments it paid and its ``transaction.created`` event (EVENT-1,
   EVENT-11: a snapshot, ``created_event``),
   each step only when the meter admitted it; pipelined with ``COMMIT``, so the meter's row is held
   only for the commit. ``ledger_writes.posting_statement`` builds it: the meter before the
   posting, gating it, the transaction's rows after it.
Refusals raise before step 2, which writes nothing. A replay writes nothing and is never metered.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from functools import partial
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from loyalty_core.customers.errors import CustomerDeactivated, CustomerNotFound
from loyalty_core.customers.models import CustomerStatus
from loyalty_core.earning import created_event, till_meter
from loyalty_core.earning.errors import PlanLimitExceeded
from loyalty_core.earning.purchases import MomentState
from loyalty_core.earning.rules import Scoring, score
from loyalty_core.earning.terms import CampaignTerms, Family, LineItem, Purchase
from loyalty_core.earning.till_purchase_find import CardMoved, Found, find, same_family
from loyalty_core.earning.till_purchase_reads import (
    Item,
    TransactionView,
    transaction_by_id,
)
from loyalty_core.earning.till_terms import TermsCache, paying
from loyalty_core.errors import IdempotencyKeyConflict
from loyalty_core.events.recording import deliveries_of, event_ctes
from loyalty_core.tenancy.access import BranchRef, VendorContext
from loyalty_core.tenancy.errors import BranchInactive, BranchNotFound
from loyalty_core.wallet import ledger
from loyalty_core.wallet.errors import WalletBusy, WalletNotFound
from loyalty_core.wallet.ledger_writes import entry_params, posting_statement
from loyalty_core.wallet.models import CauserType, EntryType


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


# Every write below hangs off ``ok``, the meter's admission: refused, the statement writes nothing.
_WRITE = posting_statement(
    before=(
        """meter AS (
    INSERT INTO transaction_meters AS tm (vendor_id, period, used)
    SELECT %(v)s, %(period)s, 1 WHERE %(metered)s
    ON CONFLICT (vendor_id, period) DO UPDATE SET used = tm.used + 1 WHERE tm.used < %(hard)s
    RETURNING 1
)""",
        """ok AS (
    SELECT 1 AS go WHERE NOT %(metered)s OR EXISTS (SELECT 1 FROM meter)
)""",
    ),
    gate="EXISTS (SELECT 1 FROM ok)",
    after=(
        """t AS (
    INSERT INTO transactions
        (id, vendor_id, customer_id, idempotency_key, total_amount, description, external_reference, branch_id,
         points_earned, rules_applied, ledger_entry_id, created_at, updated_at)
    SELECT nextval('transactions_id_seq'), %(v)s, %(c)s, %(k)s, %(total)s, %(d)s, %(ref)s, %(bid)s,
           %(amount)s, %(rules)s, (SELECT id FROM ledger_entry), %(now)s, %(now)s
    FROM ok
    RETURNING id
)""",
        """lines AS (
    INSERT INTO transaction_items
        (id, vendor_id, transaction_id, position, name, sku, quantity, unit_price, line_total, category,
         created_at, updated_at)
    SELECT nextval('transaction_items_id_seq'), %(v)s, t.id, i.n, i.name, i.sku, i.qty, i.price,
           i.qty::bigint * i.price, i.cat, %(now)s, %(now)s
    FROM t, unnest(%(names)s::text[], %(skus)s::text[], %(qtys)s::int[], %(prices)s::int[], %(cats)s::text[])
         WITH ORDINALITY AS i(name, sku, qty, price, cat, n)
    RETURNING id, position
)""",
        f"""moments AS (
    INSERT INTO customer_moments AS cm
        (id, vendor_id, customer_id, moment, since, state, transaction_id, created_at, updated_at)
    SELECT nextval('customer_moments_id_seq'), %(v)s, %(c)s, m.moment, m.since, '{MomentState.PAID}', t.id,
           %(now)s, %(now)s
    FROM t, unnest(%(moments)s::text[], %(since)s::date[]) AS m(moment, since)
    ON CONFLICT (vendor_id, customer_id, moment, since) DO UPDATE
    SET state = '{MomentState.PAID}', transaction_id = excluded.transaction_id, updated_at = excluded.updated_at
    WHERE cm.state = '{MomentState.DUE}'
)""",
        event_ctes(created_event.NAME, source="t", data=created_event.CREATED_DATA, customer="CAST(%(c)s AS bigint)"),
    ),
    select=f"""t.id AS transaction_id, (SELECT array_agg(id ORDER BY position) FROM lines) AS item_ids,
       {deliveries_of(created_event.NAME)} AS deliveries
FROM t""",
)


_ATTEMPTS = 5


def period_of(now: datetime) -> date:
    """EARN-9: the meter's period is the calendar month in UTC."""
    return now.astimezone(UTC).date().replace(day=1)


def hard_limit(max_transactions: int, overage_percent: int) -> int:
    """EARN-9: ``floor(max * (100 + overage) / 100)``."""
    return max_transactions * (100 + overage_percent) // 100


class Purchases:
    """The till's purchase path over one connection; one instance per process (it holds the terms
    cache)."""

    def __init__(self, terms: TermsCache | None = None) -> None:
        self._terms = terms or TermsCache()
        self.allowance = till_meter.Allowance()
        """The units of metered vendors' allowances this process holds (EARN-17)."""

    async def submit(
        self,
        conn: AsyncConnection[Any],
        vendor: VendorContext,
        request: PurchaseRequest,
        *,
        key: str,
        now: datetime,
    ) -> Submitted:
        """``conn`` is out of autocommit; the purchase is one transaction on it."""
        params = _params(vendor, request, key)
        plan, period = vendor.plan, period_of(now)
        hard = hard_limit(plan.max_transactions, plan.overage_percent)
        # EARN-15: a unit of the allowance taken ahead, so the meter's row is not held to the commit
        reserved = plan.max_transactions > 0 and await self.allowance.take(conn, vendor.vendor_id, period, hard)
        try:
            attempt = partial(self._find_and_score, conn, vendor, request, params, now, replayable=True)
            found, scoring = await _under_lock(conn, attempt)
            if found.earlier_id is not None:
                if found.earlier_total != request.total_amount or not await same_family(conn, vendor, found):
                    raise IdempotencyKeyConflict(
                        "This idempotency_key was used for another customer or total_amount.", idempotency_key=key
                    )
                view = await transaction_by_id(conn, vendor.vendor_id, found.earlier_id)
                await conn.commit()
                if reserved:
                    await self.allowance.give_back(conn, vendor.vendor_id, period, hard)
                return Submitted(view, created=False)
            assert scoring is not None
            params.update(
                created_event.created_params(
                    vendor.vendor_id,
                    now,
                    customer_id=found.customer_id or 0,
                    key=key,
                    total_amount=request.total_amount,
                    description=request.description,
                    external_reference=request.external_reference,
                    branch=_branch(vendor, request, found),
                    points_earned=scoring.points_earned,
                    rules=scoring.rules_applied,
                    lines=[(i.name, i.sku, i.quantity, i.unit_price, i.category) for i in request.items],
                )
            )
            # at the limit no unit was reserved: the write moves the meter, which refuses it there
            metered = plan.max_transactions > 0 and not reserved
            written = await _write(conn, vendor, request, params, found, scoring, now, metered=metered)
        except BaseException:
            await conn.rollback()
            if reserved:
                await self.allowance.give_back(conn, vendor.vendor_id, period, hard)
            raise
        if written is None:
            raise PlanLimitExceeded("The plan's transactions for this month are used up.")
        transaction_id, item_ids, deliveries = written
        view = _view(vendor, request, found, scoring, key, now, transaction_id, item_ids or [])
        return Submitted(view, created=True, deliveries=deliveries)

    async def preview(
        self, conn: AsyncConnection[Any], vendor: VendorContext, request: PurchaseRequest, *, now: datetime
    ) -> Preview:
        """EARN-11: scored exactly as a submission would be now; writes and counts nothing.
        ``conn`` is in autocommit: one statement, and the terms when the cache lacks them."""
        params = _params(vendor, request, None)
        found, scoring = await self._find_and_score(conn, vendor, request, params, now, replayable=False)
        assert scoring is not None
        assert found.customer_id is not None
        return Preview(found.customer_id, scoring)

    async def _find_and_score(
        self,
        conn: AsyncConnection[Any],
        vendor: VendorContext,
        request: PurchaseRequest,
        params: dict[str, Any],
        now: datetime,
        *,
        replayable: bool,
    ) -> tuple[Found, Scoring | None]:
        """The checks in order: customer, branch key, replay, customer state, branch state. A
        replay (``replayable`` only) comes back unscored for the caller to compare."""
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
        if replayable and found.earlier_id is not None:
            return found, None
        if found.status == CustomerStatus.DEACTIVATED:
            raise CustomerDeactivated("The customer is deactivated.", customer_id=found.customer_id)
        branch = _branch(vendor, request, found)
        if branch is not None and not branch.active:
            raise BranchInactive("The branch is closed to new transactions.", branch=branch.external_id)
        if found.wallet_id is None:
            raise WalletNotFound("The customer has no wallet.", customer_id=found.customer_id)
        purchase = Purchase(
            request.total_amount,
            branch.external_id if branch is not None else None,
            tuple(LineItem(line.quantity, line.sku) for line in request.items),
        )
        return found, score(purchase, found.facts, terms.earn_rules, campaigns, now)


async def _under_lock(
    conn: AsyncConnection[Any], attempt: Callable[[], Awaitable[tuple[Found, Scoring | None]]]
) -> tuple[Found, Scoring | None]:
    """Found and scored with the wallet locked, so the points land on the account that holds the
    card when they are written (a merge racing the purchase waits, then moves them)."""
    for _ in range(_ATTEMPTS):
        try:
            return await attempt()
        except CardMoved:
            await conn.rollback()
    # five merges of one card in a row: never seen, but a clean retryable refusal, not a 500
    raise WalletBusy("The wallet is busy with another write; retry in a moment.", retry_after=1)


async def _write(
    conn: AsyncConnection[Any],
    vendor: VendorContext,
    request: PurchaseRequest,
    params: dict[str, Any],
    found: Found,
    scoring: Scoring,
    now: datetime,
    *,
    metered: bool,
) -> tuple[int, list[int] | None, int] | None:
    """Round trip 2: the writes and COMMIT in one pipeline: the transaction's id, its lines' and
    the deliveries its event created. None when the meter refused; ``metered``: the meter is moved
    here (a purchase that reserved no unit ahead)."""
    plan = vendor.plan
    branch = _branch(vendor, request, found)
    moments = sorted(scoring.moments_paid, key=lambda m: (m.moment, m.since))
    points = scoring.points_earned
    params.update(
        entry_params(
            vendor_id=vendor.vendor_id,
            wallet_id=found.wallet_id,
            kind=EntryType.EARN,
            amount=points,
            causer_type=CauserType.API_CLIENT,
            causer_id=vendor.client_id,
            now=now,
            key=params["k"],
            opened=[(points, ledger.lot_expiry(now, vendor.point_expiry_days))],
        ),
        period=period_of(now),
        metered=metered,
        hard=hard_limit(plan.max_transactions, plan.overage_percent),
        c=found.customer_id,
        total=request.total_amount,
        d=request.description,
        ref=request.external_reference,
        bid=branch.id if branch is not None else None,
        rules=Jsonb(scoring.entries()),
        names=[line.name for line in request.items],
        skus=[line.sku for line in request.items],
        qtys=[line.quantity for line in request.items],
        prices=[line.unit_price for line in request.items],
        cats=[line.category for line in request.items],
        moments=[m.moment for m in moments],
        since=[m.since for m in moments],
        now=now,
    )
    async with conn.pipeline(), conn.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(_WRITE, params, prepare=True)
        await conn.commit()
        row = await cursor.fetchone()
    return None if row is None else (row["transaction_id"], row["item_ids"], row["deliveries"])


def _view(
    vendor: VendorContext,
    request: PurchaseRequest,
    found: Found,
    scoring: Scoring,
    key: str,
    now: datetime,
    transaction_id: int,
    item_ids: list[int],
) -> TransactionView:
    """The new transaction as written, with the ids the write drew."""
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
        customer_id=found.customer_id or 0,
        idempotency_key=key,
        total_amount=request.total_amount,
        description=request.description,
        external_reference=request.external_reference,
        branch=_branch(vendor, request, found),
        created_at=now,
        points_earned=scoring.points_earned,
        rules_applied=scoring.entries(),
        items=items,
    )


def _needs_facts(vendor: VendorContext, campaigns: tuple[CampaignTerms, ...] | list[CampaignTerms]) -> bool:
    return vendor.plan.customer_moments and any(c.family == Family.CUSTOMER_MOMENT for c in campaigns)


def _branch(vendor: VendorContext, request: PurchaseRequest, found: Found) -> BranchRef | None:
    """Branch chain: the payload's key, else the credential's default branch, else none."""
    if request.branch is not None:
        return found.branch
    return vendor.default_branch


def _params(vendor: VendorContext, request: PurchaseRequest, key: str | None) -> dict[str, Any]:
    return {"v": vendor.vendor_id, "q": request.identifier, "b": request.branch, "k": key}
