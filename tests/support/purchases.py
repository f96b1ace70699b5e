"""Purchases through POST /api/v1/transactions, and the vendor's earn rules and campaigns written
through the core services (as the admin API writes them), for the earning tests."""

from __future__ import annotations

import itertools
from decimal import Decimal
from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.clock import SystemClock
from loyalty_core.db import make_sessionmaker
from loyalty_core.earning.rules.terms import CampaignData, EarnRuleData
from loyalty_core.earning.services import CampaignService, EarnRuleService
from tests.support.tenants import Tenant

TRANSACTIONS = "/api/v1/transactions"
_keys = itertools.count(1)


def new_key() -> str:
    return f"tx-{next(_keys)}"


async def buy(
    client: AsyncTestClient[Litestar],
    tenant: Tenant,
    identifier: str,
    total: int,
    *,
    key: str | None = None,
    **more: Any,
) -> Any:
    body = {"identifier": identifier, "idempotency_key": key or new_key(), "total_amount": total, **more}
    return await client.post(TRANSACTIONS, json=body, headers=tenant.headers)


async def earn_rule(engine: AsyncEngine, vendor_id: int, **fields: Any) -> int:
    data = EarnRuleData(**{"name": "Euro", "points_per_unit": 1, "unit_amount": 100, **fields})
    async with make_sessionmaker(engine).begin() as db:
        return int((await EarnRuleService(db, SystemClock()).create(vendor_id, data)).id)


async def campaign(engine: AsyncEngine, vendor_id: int, **fields: Any) -> int:
    if "multiplier" in fields:
        fields["multiplier"] = Decimal(str(fields["multiplier"]))
    if "skus" in fields:
        fields["skus"] = tuple(fields["skus"])
    if "branches" in fields and fields["branches"] is not None:
        fields["branches"] = tuple(fields["branches"])
    data = CampaignData(**{"name": "Campaign", **fields})
    async with make_sessionmaker(engine).begin() as db:
        return int((await CampaignService(db, SystemClock()).create(vendor_id, data)).id)


async def update_campaign(engine: AsyncEngine, vendor_id: int, campaign_id: int, **changes: Any) -> None:
    async with make_sessionmaker(engine).begin() as db:
        await CampaignService(db, SystemClock()).update(vendor_id, campaign_id, changes)


async def scalar(engine: AsyncEngine, sql: str, **params: Any) -> Any:
    async with engine.connect() as conn:
        return (await conn.execute(text(sql), params)).scalar()
