"""A vendor of its own for tests of the till's purchase in the core suite, committed (a purchase
commits, so it cannot run inside a test's rolled-back transaction): its plan, one point per euro,
customers and branches written through the models and services, the caller's context as the token
check would build it, ``written``: what the vendor's purchases have left in the database, and
``rows``: what a test's own statement reads there."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SystemClock
from loyalty_core.customers.models import CustomerIdentifier
from loyalty_core.db import make_sessionmaker
from loyalty_core.earning.rules.terms import EarnRuleData
from loyalty_core.earning.services import EarnRuleService
from loyalty_core.tenancy.models import Plan
from loyalty_core.tenancy.rules.access import BranchRef, PlanLimits, VendorContext
from tests.support.vendors import make_branch, make_vendor
from tests.support.wallets import make_customer

EURO = EarnRuleData(name="Euro", points_per_unit=1, unit_amount=100)
"""One point per whole euro of the total (amounts are in cents)."""
CLIENT_ID = "cl_till"
"""The credential every shop's caller holds: the ledger entries' ``causer_id``."""


@dataclass(frozen=True, slots=True)
class Shop:
    vendor_id: int
    caller: VendorContext
    """The till's credential: read and write scopes, no default branch."""
    rule_id: int | None
    """The shop's earn rule, when it has one."""

    def at(self, branch: BranchRef) -> VendorContext:
        """The caller through a credential whose default branch is ``branch``."""
        return dataclasses.replace(self.caller, default_branch=branch)

    def on_plan(self, **limits: Any) -> VendorContext:
        """The caller once its plan's ``limits`` changed (the token check reads them per request)."""
        return dataclasses.replace(self.caller, plan=dataclasses.replace(self.caller.plan, **limits))


@dataclass(frozen=True, slots=True)
class Member:
    id: int
    email: str
    card: str


async def open_shop(engine: AsyncEngine, *, rule: EarnRuleData | None = EURO, **plan: Any) -> Shop:
    """An active vendor on a plan of its own (``plan``: its columns, such as ``max_transactions``;
    unlimited and every feature on unless given) with ``rule`` as its one earn rule, committed."""
    async with make_sessionmaker(engine).begin() as db:
        vendor = await make_vendor(db, **plan)
        made = await db.get_one(Plan, vendor.plan_id)
        rule_id = None if rule is None else (await EarnRuleService(db, SystemClock()).create(vendor.id, rule)).id
        limits = PlanLimits(
            max_transactions=made.max_transactions,
            max_customers=made.max_customers,
            max_rewards=made.max_rewards,
            max_campaigns=made.max_campaigns,
            max_locations=made.max_locations,
            rate_limit_per_minute=made.rate_limit_per_minute,
            overage_percent=made.overage_percent,
            campaigns=made.feature_campaigns,
            customer_moments=made.feature_customer_moments,
            point_expiry=made.feature_point_expiry,
            tiers=made.feature_tiers,
        )
        caller = VendorContext(vendor.id, 1, CLIENT_ID, ("read", "write"), limits, None, None)
        return Shop(vendor.id, caller, rule_id)


async def metered_shop(engine: AsyncEngine, limit: int, *, overage: int = 0) -> tuple[Shop, Member]:
    """A shop whose plan meters ``limit`` purchases a month (and ``overage`` percent more), with one
    customer."""
    shop = await open_shop(engine, max_transactions=limit, overage_percent=overage)
    return shop, await enrol(engine, shop, "metered@example.com")


async def change_rule(engine: AsyncEngine, shop: Shop, **changes: Any) -> None:
    """The shop's earn rule edited as the admin API edits it (the vendor's terms version moves)."""
    assert shop.rule_id is not None
    async with make_sessionmaker(engine).begin() as db:
        await EarnRuleService(db, SystemClock()).update(shop.vendor_id, shop.rule_id, changes)


async def enrol(engine: AsyncEngine, shop: Shop, email: str) -> Member:
    """An active customer with a wallet at 0, a loyalty card and ``email`` as identifiers, committed."""
    async with make_sessionmaker(engine).begin() as db:
        customer = await make_customer(db, shop.vendor_id, email=email)
        card = await db.scalar(
            select(CustomerIdentifier.value).where(
                CustomerIdentifier.customer_id == customer.id, CustomerIdentifier.type == "loyalty_card"
            )
        )
        assert card is not None
        return Member(customer.id, email, card)


async def open_branch(engine: AsyncEngine, shop: Shop, key: str, *, name: str, kind: str = "store") -> BranchRef:
    """An open branch of the shop, committed, as the token check refers to it."""
    async with make_sessionmaker(engine).begin() as db:
        branch = await make_branch(db, shop.vendor_id, key, name=name)
        branch.type = kind
    return BranchRef(branch.id, key, name, kind, active=True)


async def close_branch(engine: AsyncEngine, shop: Shop, branch: BranchRef) -> BranchRef:
    """The branch closed to new purchases; answers it as a credential defaulting to it now refers to it."""
    async with engine.begin() as conn:
        await conn.execute(
            text("UPDATE branches SET active = false WHERE vendor_id = :v AND id = :b"),
            {"v": shop.vendor_id, "b": branch.id},
        )
    return dataclasses.replace(branch, active=False)


@dataclass(frozen=True, slots=True)
class Written:
    """What a vendor's purchases have written: rows counted, the wallets' balances summed, and the
    plan's meter by month (no row: no metered purchase that month)."""

    transactions: int
    items: int
    entries: int
    balance: int
    events: int
    meter: dict[date, int]


_WRITTEN = text("""
SELECT (SELECT count(*) FROM transactions WHERE vendor_id = :v) AS transactions,
       (SELECT count(*) FROM transaction_items WHERE vendor_id = :v) AS items,
       (SELECT count(*) FROM ledger_entries WHERE vendor_id = :v) AS entries,
       (SELECT coalesce(sum(balance), 0) FROM wallets WHERE vendor_id = :v) AS balance,
       (SELECT count(*) FROM events WHERE vendor_id = :v AND type = 'transaction.created') AS events
""")


async def written(engine: AsyncEngine, shop: Shop) -> Written:
    async with engine.connect() as conn:
        counts = (await conn.execute(_WRITTEN, {"v": shop.vendor_id})).one()
        meters = await conn.execute(
            text("SELECT period, used FROM transaction_meters WHERE vendor_id = :v"), {"v": shop.vendor_id}
        )
        transactions, items, entries, balance, events = (int(n) for n in counts)
        meter = {period: int(used) for period, used in meters}
    return Written(transactions, items, entries, balance, events, meter)


async def rows(engine: AsyncEngine, sql: str, **params: Any) -> list[tuple[Any, ...]]:
    """``sql``'s rows (with ``params``), read on a connection of their own."""
    async with engine.connect() as conn:
        return [tuple(row) for row in await conn.execute(text(sql), params)]
