"""Vouchers: the portal makes one for a customer; a till reads it and spends it once.

Verify is one conditional update (``status = 'valid'`` and not past ``valid_until``), so of any
number of concurrent verifies exactly one spends the voucher.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.customers.errors import CustomerNotFound
from loyalty_core.customers.models import Customer, CustomerStatus
from loyalty_core.events.services.recording import record_event
from loyalty_core.random_text import READABLE, random_text
from loyalty_core.tenancy.errors import BranchInactive, BranchNotFound
from loyalty_core.tenancy.models import Branch
from loyalty_core.tenancy.rules.access import BranchRef
from loyalty_core.vouchers import errors as e
from loyalty_core.vouchers.events import VoucherUsed
from loyalty_core.vouchers.models import Voucher, VoucherBranch, VoucherStatus, shown_status


def new_code() -> str:
    return "BON-" + random_text(READABLE, 8)


class VoucherService:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def create(
        self,
        vendor_id: int,
        *,
        customer_id: int,
        description: str | None,
        valid_until: date | None,
        branches: Sequence[str] | None,
        discount_type: str,
        discount_value: int,
    ) -> tuple[Voucher, list[Branch] | None]:
        customer = await self._session.scalar(
            select(Customer.id).where(
                Customer.vendor_id == vendor_id,
                Customer.id == customer_id,
                Customer.status != CustomerStatus.ANONYMIZED,
            )
        )
        if customer is None:
            raise CustomerNotFound("No customer of the vendor has this id.", customer_id=customer_id)
        found: list[Branch] = []
        if branches:
            found = list(
                (
                    await self._session.scalars(
                        select(Branch).where(Branch.vendor_id == vendor_id, Branch.external_id.in_(branches))
                    )
                ).all()
            )
            missing = sorted(set(branches) - {b.external_id for b in found})
            if missing:
                raise BranchNotFound("No branch of the vendor has this key.", branches=missing)
        while True:
            code = new_code()
            if (
                await self._session.scalar(
                    select(Voucher.id).where(Voucher.vendor_id == vendor_id, Voucher.code == code)
                )
                is None
            ):
                break
        now = self._clock.now()
        voucher = Voucher(
            vendor_id=vendor_id,
            customer_id=customer_id,
            code=code,
            description=description,
            valid_until=valid_until,
            discount_type=discount_type,
            discount_value=discount_value,
            status=VoucherStatus.VALID,
            created_at=now,
            updated_at=now,
        )
        self._session.add(voucher)
        await self._session.flush()
        for branch in found:
            self._session.add(VoucherBranch(vendor_id=vendor_id, voucher_id=voucher.id, branch_id=branch.id))
        await self._session.flush()
        return voucher, sorted(found, key=lambda b: b.external_id) or None

    async def get(self, vendor_id: int, code: str) -> tuple[Voucher, list[Branch] | None]:
        voucher: Voucher | None = await self._session.scalar(
            select(Voucher).where(Voucher.vendor_id == vendor_id, Voucher.code == code.upper())
        )
        if voucher is None:
            raise e.VoucherNotFound("The vendor has no voucher with this code.", code=code)
        branches = list(
            (
                await self._session.scalars(
                    select(Branch)
                    .join(
                        VoucherBranch,
                        (VoucherBranch.vendor_id == Branch.vendor_id) & (VoucherBranch.branch_id == Branch.id),
                    )
                    .where(VoucherBranch.vendor_id == vendor_id, VoucherBranch.voucher_id == voucher.id)
                    .order_by(Branch.external_id)
                )
            ).all()
        )
        return voucher, branches or None

    async def verify(
        self, vendor_id: int, code: str, *, branch_key: str | None, default_branch: BranchRef | None
    ) -> tuple[Voucher, list[Branch] | None]:
        """The redemption's branch chain (payload, else the credential's default), then the spend."""
        voucher, branches = await self.get(vendor_id, code)
        branch_id: int | None = None
        if branch_key is not None:
            branch_id = await self._session.scalar(
                select(Branch.id).where(Branch.vendor_id == vendor_id, Branch.external_id == branch_key)
            )
            if branch_id is None:
                raise BranchNotFound("No branch of the vendor has this key.", branch=branch_key)
        elif default_branch is not None:
            if not default_branch.active:
                raise BranchInactive("The credential's default branch is closed.", branch=default_branch.external_id)
            branch_id = default_branch.id
        if branches and branch_id not in {b.id for b in branches}:
            raise e.BranchRequired("The voucher is good only at one of its branches.", code=voucher.code)
        now = self._clock.now()
        today = now.date()
        spent = await self._session.scalar(
            update(Voucher)
            .where(
                Voucher.id == voucher.id,
                Voucher.status == VoucherStatus.VALID,
                Voucher.valid_until.is_(None) | (Voucher.valid_until >= today),
            )
            .values(status=VoucherStatus.USED, used_at=now, updated_at=now)
            .returning(Voucher.id),
            execution_options={"synchronize_session": False},
        )
        await self._session.refresh(voucher)
        if spent is None:
            if shown_status(voucher, today) == "expired":
                raise e.VoucherExpired("The voucher is past its valid_until date.", code=voucher.code)
            raise e.VoucherAlreadyUsed("The voucher was already spent.", code=voucher.code)
        data = VoucherUsed.of(voucher, branches, today)
        await record_event(self._session, self._clock, vendor_id, data, customer_id=voucher.customer_id)
        return voucher, branches
