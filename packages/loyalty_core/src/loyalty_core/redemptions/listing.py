"""The admin list of a vendor's redemptions, newest first, by customer, status or code.

``expired`` is never stored: a valid code whose ``expires_at`` the clock has reached reads expired,
so the status filter compares ``expires_at`` with now the way the read does."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, and_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.listing import Listed, rows_of
from loyalty_core.redemptions.models import Redemption, StoredStatus
from loyalty_core.tenancy.models import Branch

EXPIRED = "expired"
STATUSES = (StoredStatus.VALID, StoredStatus.USED, StoredStatus.CANCELLED, EXPIRED)


def status_condition(status: str, now: datetime) -> ColumnElement[bool]:
    r = Redemption
    lapsed = and_(r.expires_at.isnot(None), r.expires_at <= now)
    if status == EXPIRED:
        return and_(r.status == StoredStatus.VALID, lapsed)
    if status == StoredStatus.VALID:
        return and_(r.status == StoredStatus.VALID, or_(r.expires_at.is_(None), r.expires_at > now))
    return r.status == status


class RedemptionList:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def redemptions(
        self,
        vendor_id: int,
        *,
        customer_id: int | None,
        status: str | None,
        code: str | None,
        page: int,
        per_page: int,
    ) -> Listed[tuple[Redemption, Branch | None]]:
        r = Redemption
        statement = (
            select(r, Branch)
            .outerjoin(Branch, and_(Branch.vendor_id == r.vendor_id, Branch.id == r.branch_id))
            .where(r.vendor_id == vendor_id)
            .order_by(r.redeemed_at.desc(), r.id.desc())
        )
        if customer_id is not None:
            statement = statement.where(r.customer_id == customer_id)
        if code is not None:
            statement = statement.where(r.confirmation_code == code.strip().upper())
        if status is not None:
            statement = statement.where(status_condition(status, self._clock.now()))
        return await rows_of(self._session, statement, page=page, per_page=per_page)
