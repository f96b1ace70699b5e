"""The back office's list of customers: a page of the shop's customers matching a search and a
status, sorted as a manager asks (newest, oldest, name, balance, last purchase), each row with its
first card code, balance and last purchase, and a count capped at ``listing.COUNT_CAP`` (PORTAL-18).
It joins the customer (``accounts``) with the fold's latest purchase (``earning``), so it sits above
both.

Newest and oldest first walk the primary key from the shop's end and stop after the page; the other
sorts read the shop's matching customers once and keep the top of the order (a top-N sort, its
memory bounded by the page), which docs/decisions.md weighs. The count stops at the cap either way.
Either way the page's ids are chosen first, over the customers and the sort's own join alone, and
the row's columns (card, balance with its due points, latest purchase) computed for those ids only:
a deep page's offset skips keys, not rows computed in full (INPUT-22)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Select, and_, cast, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.accounts.reads.search import count_cap, matching
from loyalty_core.customers.models import Customer, CustomerIdentifier, IdentifierType
from loyalty_core.earning.models import Transaction, customer_activity
from loyalty_core.listing import Paged, paged
from loyalty_core.wallet.models import Wallet, due_points
from loyalty_core.wallet.till_pending import available_shown

_C = Customer.__table__.c
_I = CustomerIdentifier.__table__.c
_W = Wallet.__table__.c
_A = customer_activity.c
_T = Transaction.__table__.c

SORTS: dict[str, str] = {
    "newest": "Newest first",
    "oldest": "Oldest first",
    "name": "Name",
    "balance": "Highest balance",
    "last_purchase": "Latest purchase",
}
"""The orders the list takes (``sort`` in the query), the first the default, with their labels."""
STATUSES = ("active", "deactivated")


@dataclass(frozen=True, slots=True)
class CustomerRow:
    id: int
    first_name: str | None
    last_name: str | None
    email: str | None
    card: str | None
    balance: int
    status: str
    last_purchase_at: datetime | None

    @property
    def name(self) -> str:
        return " ".join(part for part in (self.first_name, self.last_name) if part)


def _orders(sort: str) -> list[Any]:
    """The ``order by`` of a sort, ending with the id so that pages never overlap."""
    if sort == "oldest":
        return [_C.id.asc()]
    if sort == "name":
        return [func.lower(_C.last_name).asc(), func.lower(_C.first_name).asc(), _C.id.asc()]
    if sort == "balance":
        return [func.coalesce(_W.balance, 0).desc(), _C.id.desc()]
    if sort == "last_purchase":
        return [_A.last_purchase_at.desc().nulls_last(), _C.id.desc()]
    return [_C.id.desc()]


async def customer_list(
    session: AsyncSession, now: datetime, vendor_id: int, *, q: str | None, status: str | None, sort: str, page: int
) -> Paged[CustomerRow]:
    """A page of the shop's customers (anonymized ones never), with the capped count of the list."""
    condition = matching(vendor_id, q)
    if status in STATUSES:
        condition = and_(condition, _C.status == status)
    card = (
        select(_I.value)
        .where(
            _I.vendor_id == _C.vendor_id,
            _I.customer_id == _C.id,
            _I.type == IdentifierType.LOYALTY_CARD,
            _I.active.is_(True),
        )
        .order_by(_I.assigned_at.asc().nulls_first(), _I.id)
        .limit(1)
        .correlate(Customer.__table__)
        .scalar_subquery()
    )
    # the latest purchase read from the customer's newest-first index: exact, though the fold lags
    latest = (
        select(func.max(_T.created_at))
        .where(_T.vendor_id == _C.vendor_id, _T.customer_id == _C.id)
        .correlate(Customer.__table__)
        .scalar_subquery()
    )
    due = due_points(_W.vendor_id, _W.id, now).scalar_subquery()
    orders = _orders(sort if sort in SORTS else "newest")

    def window(limit: int, offset: int) -> Select[Any]:
        # the page's ids first, over the customers and the sort's own join alone; the row's columns
        # (card, balance with its due points, latest purchase) only for those ids (INPUT-22)
        chosen = _joined(select(_C.id), sort).where(condition).order_by(*orders).limit(limit).offset(offset).subquery()
        return (
            select(
                _C.id,
                _C.first_name,
                _C.last_name,
                _C.email,
                card,
                cast(func.coalesce(_W.balance, 0) - due + available_shown(_W, now), BigInteger),
                _C.status,
                latest,
            )
            .select_from(chosen.join(Customer.__table__, _C.id == chosen.c.id))
            .outerjoin(Wallet.__table__, and_(_W.vendor_id == _C.vendor_id, _W.customer_id == _C.id))
            .outerjoin(customer_activity, and_(_A.vendor_id == _C.vendor_id, _A.customer_id == _C.id))
            .where(_C.vendor_id == vendor_id)
            .order_by(*orders)
        )

    found = await paged(session, window, count=select(_C.id).where(condition), page=page, cap=count_cap(q))
    rows = [CustomerRow(*row) for row in found.items]
    return Paged(rows, found.page, found.per_page, found.total, found.more, found.cap)


def _joined(statement: Select[Any], sort: str) -> Select[Any]:
    """``statement`` over the customers with the join its sort orders by (the wallet's balance, the
    fold's latest purchase), and no other."""
    statement = statement.select_from(Customer.__table__)
    if sort == "balance":
        return statement.outerjoin(Wallet.__table__, and_(_W.vendor_id == _C.vendor_id, _W.customer_id == _C.id))
    if sort == "last_purchase":
        return statement.outerjoin(customer_activity, and_(_A.vendor_id == _C.vendor_id, _A.customer_id == _C.id))
    return statement
