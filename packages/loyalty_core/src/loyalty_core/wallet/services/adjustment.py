"""Adjustments by a till or the portal (spec: POST /customers/{customer}/wallet/adjust, rules 1 to 5)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.exc import OperationalError

from loyalty_core.customers.errors import CustomerDeactivated
from loyalty_core.customers.models import Customer, CustomerStatus
from loyalty_core.errors import IdempotencyKeyConflict
from loyalty_core.tenancy.models import Plan, Vendor
from loyalty_core.wallet.errors import WalletNotFound
from loyalty_core.wallet.models import EntryType, LedgerEntry, Wallet
from loyalty_core.wallet.services.posting import Causer, Posting, _busy


class Unknown:
    """Marks an argument the caller does not know, as opposed to a known ``None``."""


UNKNOWN = Unknown()


@dataclass(frozen=True, slots=True)
class Adjusted:
    entry: LedgerEntry
    created: bool
    """False for a replay: the original entry, nothing written."""


class Adjustments(Posting):
    async def adjust(
        self,
        vendor_id: int,
        customer_id: int,
        *,
        amount: int,
        reason: str,
        key: str,
        causer: Causer,
        expire_after_days: int | Unknown | None = UNKNOWN,
    ) -> Adjusted:
        """``expire_after_days``: the vendor's term for new points when the caller already knows it
        (the authenticated vendor context does); looked up otherwise."""
        customer, wallet = await self._customer_and_locked_wallet(vendor_id, customer_id)
        previous: LedgerEntry | None = await self._session.scalar(
            _ADJUSTMENT_BY_KEY, {"vendor_id": vendor_id, "customer_id": customer.id, "key": key}
        )
        if previous is not None:
            if previous.amount != amount:
                raise IdempotencyKeyConflict("This key was used for a different amount.", idempotency_key=key)
            return Adjusted(previous, created=False)
        if customer.merged_into_id is not None:
            raise CustomerDeactivated(
                "The account was merged into another and takes no new adjustments.",
                merged_into_id=customer.merged_into_id,
            )
        if amount > 0 and isinstance(expire_after_days, Unknown):
            expire_after_days = await self._expiry_days(vendor_id)
        entry, _ = await self.post(
            wallet,
            amount,
            kind=EntryType.ADJUST,
            causer=causer,
            reason=reason,
            key=key,
            expire_after_days=None if isinstance(expire_after_days, Unknown) else expire_after_days,
        )
        return Adjusted(entry, created=True)

    async def _customer_and_locked_wallet(self, vendor_id: int, customer_id: int) -> tuple[Customer, Wallet]:
        """The customer and its wallet, the wallet row locked, in one round trip."""
        try:
            row = (
                await self._session.execute(
                    _CUSTOMER_AND_LOCKED_WALLET, {"vendor_id": vendor_id, "customer_id": customer_id}
                )
            ).first()
        except OperationalError as exc:
            raise _busy(exc) from exc
        if row is None:
            await self.customer(vendor_id, customer_id)  # which one is missing: the customer or its wallet
            raise WalletNotFound("The customer has no wallet.", customer_id=customer_id)
        return row[0], row[1]

    async def _expiry_days(self, vendor_id: int) -> int | None:
        """New points expire only while the vendor's plan has point expiry and the vendor set a term."""
        row = (
            await self._session.execute(
                select(Vendor.points_expire_after_days, Plan.feature_point_expiry)
                .join(Plan, Plan.id == Vendor.plan_id)
                .where(Vendor.id == vendor_id)
            )
        ).first()
        if row is None or not row[1]:
            return None
        days: int | None = row[0]
        return days


# Built once: constructing these per call cost more than running them.
_CUSTOMER_AND_LOCKED_WALLET = (
    select(Customer, Wallet)
    .join(Wallet, (Wallet.vendor_id == Customer.vendor_id) & (Wallet.customer_id == Customer.id))
    .where(
        Customer.vendor_id == bindparam("vendor_id"),
        Customer.id == bindparam("customer_id"),
        Customer.status != CustomerStatus.ANONYMIZED,
    )
    .with_for_update(of=Wallet)
)


def _key_scope() -> Any:
    """Wallet ids whose adjustment keys count for the customer: its own and those of every
    account merged into it, at any depth (adjust rules 1 and 4)."""
    family = (
        select(Customer.id)
        .where(Customer.vendor_id == bindparam("vendor_id"), Customer.id == bindparam("customer_id"))
        .cte("family", recursive=True)
    )
    family = family.union_all(
        select(Customer.id).where(Customer.vendor_id == bindparam("vendor_id"), Customer.merged_into_id == family.c.id)
    )
    return select(Wallet.id).where(
        Wallet.vendor_id == bindparam("vendor_id"), Wallet.customer_id.in_(select(family.c.id))
    )


_ADJUSTMENT_BY_KEY: Any = (
    select(LedgerEntry)
    .where(
        LedgerEntry.wallet_id.in_(_key_scope()),
        LedgerEntry.type == EntryType.ADJUST,
        LedgerEntry.idempotency_key == bindparam("key"),
    )
    .order_by(LedgerEntry.id)
    .limit(1)
)
