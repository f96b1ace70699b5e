"""Customers with wallets and points for the wallet tests, written straight through the models,
so these tests stand on the ledger alone."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import FixedClock
from loyalty_core.customers.models import Customer, CustomerIdentifier
from loyalty_core.db import make_sessionmaker
from loyalty_core.wallet.models import Wallet
from loyalty_core.wallet.services import Causer, WalletService

_cards = itertools.count(1)


async def new_customer(engine: AsyncEngine, vendor_id: int, *, email: str | None = None) -> int:
    async with make_sessionmaker(engine).begin() as db:
        customer = Customer(vendor_id=vendor_id, first_name="Ann", email=email, locale="nl", status="active")
        db.add(customer)
        await db.flush()
        db.add(Wallet(vendor_id=vendor_id, customer_id=customer.id, balance=0))
        db.add(
            CustomerIdentifier(
                vendor_id=vendor_id,
                customer_id=customer.id,
                type="loyalty_card",
                value=f"W{next(_cards):07d}",
                active=True,
                assigned_at=datetime(2026, 1, 1, tzinfo=UTC),
            )
        )
        return int(customer.id)


async def earn(
    engine: AsyncEngine, vendor_id: int, customer_id: int, points: int, *, at: datetime, days: int | None = None
) -> None:
    """Earned points as the transactions issue will write them: through WalletService.post."""
    async with make_sessionmaker(engine).begin() as db:
        service = WalletService(db, FixedClock(at))
        wallet = await service.wallet_of(vendor_id, customer_id, lock=True)
        await service.post(wallet, points, kind="earn", causer=Causer("api_client", "cl_earn"), expire_after_days=days)


def days_after(at: datetime, days: int) -> datetime:
    return at + timedelta(days=days)
