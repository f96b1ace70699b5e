"""The back office's customer search: one vendor's customers matching what a person at the counter
or in the portal types (a card code, an email, an external id, or a part of a name); the admin API
pages through them oldest first, and the portal's list (``loyalty_core.customer_list``) filters by
the same condition.

The admin API and the vendor portal both answer with it, so it lives here with the read it
extends: the customer with its balance, as ``accounts.reads.customer`` builds it.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, func, or_, select, union
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core import listing
from loyalty_core.accounts.reads.customer import customer_rows, customer_view
from loyalty_core.clock import Clock
from loyalty_core.customers.models import Customer, CustomerIdentifier, CustomerStatus
from loyalty_core.customers.reads.customer import CustomerView
from loyalty_core.listing import Listed, count_of, offset_of, past_the_end
from loyalty_core.text import fold, folded_name, like_part

_C = Customer.__table__.c
_I = CustomerIdentifier.__table__.c
_M = Customer.__table__.alias("matched").c


def matching(vendor_id: int, q: str | None) -> Any:
    """The condition on ``customers``: every customer of the vendor but anonymized ones, and with
    ``q`` those whose card code or other identifier, email or external id is ``q`` exactly (case
    aside for codes and emails), or whose name holds ``q`` without regard to case or accents.

    Every way of matching is answered by an index (CUSTOMER-17): the identifier value, email and
    external id by their unique indexes, a part of a name by the names' trigram index
    (``folded_name``). A term of letters only is written as one OR, so the planner may walk the key
    in the list's order and stop at the page's end when the term is common (three letters held by
    thousands of names); a term with a digit or an ``@`` (a card, an email, an external id) is a union
    of the four index reads, since the planner takes such a term for a common part of a name and
    would walk every customer to find the one it names."""
    condition = and_(_C.vendor_id == vendor_id, _C.status != CustomerStatus.ANONYMIZED)
    term = (q or "").strip()
    if not term:
        return condition
    name = folded_name(_C.first_name, _C.last_name).like(like_part(fold(term)))
    if not any(c.isdigit() or c == "@" for c in term):
        held = (
            select(_I.customer_id)
            .where(_I.vendor_id == vendor_id, func.lower(_I.value) == func.lower(term))
            .scalar_subquery()
        )
        return and_(
            condition, or_(_C.id == held, func.lower(_C.email) == func.lower(term), _C.external_id == term, name)
        )
    found = union(
        select(_I.customer_id).where(_I.vendor_id == vendor_id, func.lower(_I.value) == func.lower(term)),
        select(_M.id).where(_M.vendor_id == vendor_id, func.lower(_M.email) == func.lower(term)),
        select(_M.id).where(_M.vendor_id == vendor_id, _M.external_id == term),
        select(_M.id).where(
            _M.vendor_id == vendor_id, folded_name(_M.first_name, _M.last_name).like(like_part(fold(term)))
        ),
    )
    return and_(condition, _C.id.in_(found))


def count_cap(q: str | None) -> int | None:
    """How far a search's matches are counted: a term of letters only may be part of a name, which
    thousands of names hold, so it is counted to ``NAME_COUNT_CAP`` (INPUT-23); the rest (every
    customer, a card, an email, an external id) to the general cap (None)."""
    term = (q or "").strip()
    if term and not any(c.isdigit() or c == "@" for c in term):
        return listing.NAME_COUNT_CAP
    return None


class CustomerSearch:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def search(self, vendor_id: int, q: str | None, *, page: int, per_page: int) -> Listed[CustomerView]:
        """A page of the matching customers, oldest first, each as the customer read shows it."""
        ids = select(_C.id).where(matching(vendor_id, q))
        cap = count_cap(q)
        total = await count_of(self._session, ids, cap=cap)
        if past_the_end(total, page, per_page, cap=cap):
            return Listed([], total)
        # the page's ids first, over the customers alone; the balance, identifiers, tier and referral
        # columns only for those ids, never for the rows the offset skips (INPUT-22)
        chosen = ids.order_by(_C.id).limit(per_page).offset(offset_of(page, per_page)).subquery()
        statement = (
            customer_rows(self._clock.now())
            .join(chosen, _C.id == chosen.c.id)
            .where(_C.vendor_id == vendor_id)
            .order_by(_C.id)
        )
        rows = (await self._session.execute(statement)).mappings().all()
        return Listed([customer_view(row) for row in rows], total)
