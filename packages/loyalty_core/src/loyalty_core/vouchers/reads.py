"""The admin list of a vendor's vouchers, newest first, optionally one customer's."""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.listing import Listed, page_of
from loyalty_core.tenancy.models import Branch
from loyalty_core.vouchers.models import Voucher, VoucherBranch


class VoucherList:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def vouchers(
        self, vendor_id: int, *, customer_id: int | None, page: int, per_page: int
    ) -> Listed[tuple[Voucher, list[Branch] | None]]:
        statement = select(Voucher).where(Voucher.vendor_id == vendor_id).order_by(Voucher.id.desc())
        if customer_id is not None:
            statement = statement.where(Voucher.customer_id == customer_id)
        listed = await page_of(self._session, statement, page=page, per_page=per_page)
        branches: dict[int, list[Branch]] = defaultdict(list)
        if listed.items:
            rows = await self._session.execute(
                select(VoucherBranch.voucher_id, Branch)
                .join(Branch, (Branch.vendor_id == VoucherBranch.vendor_id) & (Branch.id == VoucherBranch.branch_id))
                .where(VoucherBranch.vendor_id == vendor_id, VoucherBranch.voucher_id.in_([v.id for v in listed.items]))
                .order_by(Branch.external_id)
            )
            for voucher_id, branch in rows.all():
                branches[voucher_id].append(branch)
        return Listed([(v, branches.get(v.id) or None) for v in listed.items], listed.total)
