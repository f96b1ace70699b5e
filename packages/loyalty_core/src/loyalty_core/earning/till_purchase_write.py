"""Round trip 2 of a till's purchase: one statement, pipelined with ``COMMIT``, that uses the unit the
purchase reserved ahead (deleting its lease, EARN-18) or, when it reserved none or its lease was
taken back, moves the plan's meter (a conditional upsert: racing purchases never pass the hard
limit), credits the wallet, writes the entry, its lot, the transaction, its lines, the
moments it paid and its ``transaction.created`` event (EVENT-1, EVENT-11: a snapshot,
``earning.events``), each step only when the meter admitted it, so the meter's row is held only for
the commit. ``till_posting.posting_statement`` builds it: the meter before the posting, gating it,
the transaction's rows after it.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from loyalty_core.customers.resources import CustomerTier
from loyalty_core.earning.events import CREATED_DATA, NAME, CreatedSnapshot, created_data
from loyalty_core.earning.models import MomentState
from loyalty_core.earning.rules.engine import Scoring
from loyalty_core.earning.till_tier_moves import read_moved, record_move
from loyalty_core.events.services.recording import deliveries_of, event_ctes, new_event_id, payload_sql
from loyalty_core.referrals.till_complete import COMPLETE, ReferralComplete
from loyalty_core.tenancy.rules.access import BranchRef, VendorContext
from loyalty_core.tiers.till_months import PURCHASE_MONTH
from loyalty_core.till_sql import bound, statements_of
from loyalty_core.wallet.models import CauserType, EntryType
from loyalty_core.wallet.rules import lot_expiry
from loyalty_core.wallet.till_pending import PENDING_CTES
from loyalty_core.wallet.till_posting import PostingParams, entry_params, posting_statement
from loyalty_core.wallet.till_protocol import RunAgain

SQL = statements_of(__name__)


class PurchaseWrite(PostingParams, frozen=True):
    """The write's parameters: the posting's (the entry's ``amount`` is the points earned), then the
    meter's, the transaction's, its lines', its moments' and its event's."""

    period: date
    metered: bool
    """The vendor's plan meters purchases."""
    lease_id: int | None
    """The unit reserved ahead (``till_meter``): its lease is deleted here; None, or a lease that is
    gone, and the meter is moved here."""
    hard_limit: int
    customer_id: int
    idempotency_key: str
    total_amount: int
    description: str | None
    external_reference: str | None
    branch_id: int | None
    rules_applied: Jsonb
    line_names: list[str]
    line_skus: list[str | None]
    line_quantities: list[int]
    line_unit_prices: list[int]
    line_categories: list[str | None]
    moments: list[str]
    moment_since: list[date]
    purchase_event_id: str
    purchase_event_data: str
    points_earned: int
    """The purchase's points: the posting's ``amount``, or 0 there when they are pending."""
    points_available_at: datetime


class PendingPurchaseWrite(PurchaseWrite, frozen=True):
    """The write of a vendor whose ``pending_days`` is above 0 (PENDING-2): its posting's amount is 0,
    and its points wait in ``pending_points`` (``wallet/till_pending.py``)."""

    pending_points: int
    available_at: datetime
    pending_lot_ends: datetime | None


def _write_sql(pending: tuple[str, ...] = ()) -> str:
    """The statement; ``pending``: the pending row's CTEs, after the transaction's."""
    return posting_statement(
        before=(
            """spent AS (
    DELETE FROM meter_leases WHERE vendor_id = %(vendor_id)s AND id = %(lease_id)s
    RETURNING 1
)""",
            """meter AS (
    INSERT INTO transaction_meters AS tm (vendor_id, period, used)
    SELECT %(vendor_id)s, %(period)s, 1 WHERE %(metered)s AND NOT EXISTS (SELECT 1 FROM spent)
    ON CONFLICT (vendor_id, period) DO UPDATE SET used = tm.used + 1 WHERE tm.used < %(hard_limit)s
    RETURNING 1
)""",
            """ok AS (
    SELECT 1 AS go WHERE NOT %(metered)s OR EXISTS (SELECT 1 FROM spent) OR EXISTS (SELECT 1 FROM meter)
)""",
        ),
        gate="EXISTS (SELECT 1 FROM ok)",
        after=(
            """t AS (
    INSERT INTO transactions
        (id, vendor_id, customer_id, idempotency_key, total_amount, description, external_reference, branch_id,
         points_earned, rules_applied, ledger_entry_id, points_available_at, created_at, updated_at)
    SELECT nextval('transactions_id_seq'), %(vendor_id)s, %(customer_id)s, %(idempotency_key)s, %(total_amount)s,
           %(description)s, %(external_reference)s, %(branch_id)s, %(points_earned)s, %(rules_applied)s,
           (SELECT id FROM ledger_entry), %(points_available_at)s, %(now)s, %(now)s
    FROM ok
    RETURNING id
)""",
            *pending,
            """lines AS (
    INSERT INTO transaction_items
        (id, vendor_id, transaction_id, position, name, sku, quantity, unit_price, line_total, category,
         created_at, updated_at)
    SELECT nextval('transaction_items_id_seq'), %(vendor_id)s, t.id, i.n, i.name, i.sku, i.qty, i.price,
           i.qty::bigint * i.price, i.cat, %(now)s, %(now)s
    FROM t, unnest(%(line_names)s::text[], %(line_skus)s::text[], %(line_quantities)s::int[],
                   %(line_unit_prices)s::int[], %(line_categories)s::text[])
         WITH ORDINALITY AS i(name, sku, qty, price, cat, n)
    RETURNING id, position
)""",
            f"""moments AS (
    INSERT INTO customer_moments AS cm
        (id, vendor_id, customer_id, moment, since, state, transaction_id, created_at, updated_at)
    SELECT nextval('customer_moments_id_seq'), %(vendor_id)s, %(customer_id)s, m.moment, m.since,
           '{MomentState.PAID}', t.id, %(now)s, %(now)s
    FROM t, unnest(%(moments)s::text[], %(moment_since)s::date[]) AS m(moment, since)
    ON CONFLICT (vendor_id, customer_id, moment, since) DO UPDATE
    SET state = '{MomentState.PAID}', transaction_id = excluded.transaction_id, updated_at = excluded.updated_at
    WHERE cm.state = '{MomentState.DUE}'
)""",
            PURCHASE_MONTH,
            event_ctes(
                NAME,
                source="t",
                data=CREATED_DATA,
                customer="CAST(%(customer_id)s AS bigint)",
                vendor="%(vendor_id)s",
                at="%(now)s",
                **payload_sql(CreatedSnapshot),
            ),
        ),
        select=f"""t.id AS transaction_id, (SELECT array_agg(id ORDER BY position) FROM lines) AS item_ids,
       {deliveries_of(NAME)} AS deliveries
FROM t""",
    )


# Every write below hangs off ``ok``, the meter's admission: refused, the statement writes nothing.
_WRITE = SQL("write", _write_sql(), PurchaseWrite)
_WRITE_PENDING = SQL("write_pending", _write_sql(PENDING_CTES), PendingPurchaseWrite)


def purchase_write(
    vendor: VendorContext,
    *,
    customer_id: int,
    wallet_id: int | None,
    branch: BranchRef | None,
    scoring: Scoring,
    key: str,
    total_amount: int,
    description: str | None,
    external_reference: str | None,
    lines: list[tuple[str, str | None, int, int, str | None]],
    now: datetime,
    period: date,
    hard_limit: int,
    metered: bool,
    lease_id: int | None,
) -> PurchaseWrite:
    """The write's parameters, once per purchase; ``lines``: (name, sku, quantity, unit price,
    category) in the request's order. A vendor whose ``pending_days`` is above 0 gets a
    :class:`PendingPurchaseWrite` (PENDING-2)."""
    points = scoring.points_earned
    waits = vendor.pending_days > 0
    available_at = now + timedelta(days=vendor.pending_days) if waits else now
    credited = 0 if waits else points
    posting = entry_params(
        vendor_id=vendor.vendor_id,
        wallet_id=wallet_id,
        kind=EntryType.EARN,
        amount=credited,
        causer_type=CauserType.API_CLIENT,
        causer_id=vendor.client_id,
        now=now,
        key=key,
        opened=[(credited, lot_expiry(now, vendor.point_expiry_days))],
    )
    moments = sorted(scoring.moments_paid, key=lambda m: (m.moment, m.since))
    written = PurchaseWrite(
        **bound(posting),
        period=period,
        metered=metered,
        lease_id=lease_id,
        hard_limit=hard_limit,
        customer_id=customer_id,
        idempotency_key=key,
        total_amount=total_amount,
        description=description,
        external_reference=external_reference,
        branch_id=branch.id if branch is not None else None,
        rules_applied=Jsonb(scoring.entries()),
        line_names=[line[0] for line in lines],
        line_skus=[line[1] for line in lines],
        line_quantities=[line[2] for line in lines],
        line_unit_prices=[line[3] for line in lines],
        line_categories=[line[4] for line in lines],
        moments=[m.moment for m in moments],
        moment_since=[m.since for m in moments],
        purchase_event_id=new_event_id(now),
        purchase_event_data=created_data(
            customer_id=customer_id,
            key=key,
            total_amount=total_amount,
            description=description,
            external_reference=external_reference,
            branch=branch,
            points_earned=points,
            rules=scoring.rules_applied,
            lines=lines,
            points_available_at=available_at,
        ),
        points_earned=points,
        points_available_at=available_at,
    )
    if not waits:
        return written
    return PendingPurchaseWrite(
        **bound(written),
        pending_points=points,
        available_at=available_at,
        pending_lot_ends=lot_expiry(available_at, vendor.point_expiry_days),
    )


async def write(
    conn: AsyncConnection[Any],
    params: PurchaseWrite,
    *,
    moved: CustomerTier | None = None,
    referral: ReferralComplete | None = None,
) -> tuple[int, list[int] | None, int] | None:
    """The writes and COMMIT in one pipeline: the transaction's id, its lines' and the deliveries
    its events created. None when the meter refused. ``moved``: the tier held before, when the
    purchase moves the customer to another one (``till_tier_moves.tier_move``, TIER-18): then the
    customer is read in the same pipeline and its ``customer.tier_changed`` recorded before the
    COMMIT, one more round trip in that rare case only. ``referral``: the completion the purchase
    makes (``referrals.till_complete``, REFERRAL-11), sent after the write in the same pipeline; its
    answer is read before the ``COMMIT`` (one more round trip, once per referee), so a referral a
    merge of its referrer moved in the meantime undoes the purchase and runs it again
    (``RunAgain``)."""
    async with (
        conn.pipeline() as pipeline,
        conn.cursor(row_factory=dict_row) as cursor,
        conn.cursor(row_factory=dict_row) as completing,
    ):
        sql = _WRITE_PENDING if isinstance(params, PendingPurchaseWrite) else _WRITE
        await cursor.execute(sql, bound(params), prepare=True)
        if referral is not None:
            await completing.execute(COMPLETE, bound(referral), prepare=True)
        if moved is None and referral is None:
            await conn.commit()
            row = await cursor.fetchone()
            more = 0
        else:
            customer = None
            if moved is not None:
                customer = await read_moved(conn, params.vendor_id, params.customer_id, params.now)
            await pipeline.sync()
            row = await cursor.fetchone()
            more = 0
            if referral is not None:
                completed = await completing.fetchone()
                if row is not None and completed is None:
                    raise RunAgain
                more += 0 if completed is None else completed["deliveries"]
            if customer is not None:
                assert moved is not None
                more += 0 if row is None else await record_move(customer, moved, params.now)
                await customer.close()
            await conn.commit()
    if row is None:
        return None
    return row["transaction_id"], row["item_ids"], row["deliveries"] + more
