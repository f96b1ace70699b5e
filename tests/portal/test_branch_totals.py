"""The branch totals (DASHBOARD-5, DASHBOARD-6): the ledger-totals fold adds each branch's purchases and
redemptions per day behind its watermarks, and the read adds what is not folded yet, so the figures
equal the raw rows at any moment; the migration that fills the past runs in batches beside the fold
and neither counts a row twice."""

from __future__ import annotations

import asyncio
import importlib.util
from datetime import UTC, date, datetime
from pathlib import Path

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import TextClause, text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core.db import make_sessionmaker
from loyalty_core.wallet.branch_totals import BranchFigures, figures_by_branch
from loyalty_core.wallet.jobs import fold_ledger
from tests.support.app import ADMIN
from tests.support.customers import register
from tests.support.purchases import buy, earn_rule
from tests.support.redemptions import redeem, reward
from tests.support.shops import rows
from tests.support.tenants import Tenant, make_tenant
from tests.support.vendors import make_branch

RUN = "/admin/v1/jobs/ledger-totals/run"
BACKFILL = next(
    Path(__file__).parents[2].glob("services/api/src/loyalty_api/migrations/versions/*_branch_totals_backfill.py")
)
# what branch_totals must hold behind its markers, summed from the rows themselves
RAW = """
SELECT vendor_id, day, branch_id, sum(purchases), sum(amount), sum(points_earned), sum(redemptions),
       sum(points_redeemed)
FROM (
    SELECT vendor_id, (created_at AT TIME ZONE 'UTC')::date AS day, coalesce(branch_id, 0) AS branch_id,
           1 AS purchases, total_amount AS amount, points_earned, 0 AS redemptions, 0 AS points_redeemed
    FROM transactions WHERE id <= (SELECT branch_purchases_through FROM ledger_totals_watermark)
    UNION ALL
    SELECT vendor_id, (redeemed_at AT TIME ZONE 'UTC')::date, coalesce(branch_id, 0), 0, 0, 0, 1, points_deducted
    FROM redemptions WHERE ledger_entry_id <= (SELECT branch_entries_through FROM ledger_totals_watermark)
) raw
GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
"""
FOLDED = """
SELECT vendor_id, day, branch_id, purchases, amount, points_earned, redemptions, points_redeemed
FROM branch_totals ORDER BY 1, 2, 3
"""


def backfill_statement() -> TextClause:
    found = importlib.util.spec_from_file_location("branch_totals_backfill", BACKFILL)
    assert found is not None
    assert found.loader is not None
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    fill: TextClause = module.FILL
    return fill


async def fold(client: AsyncTestClient[Litestar]) -> None:
    response = await client.post(RUN, headers=ADMIN)
    assert response.status_code == 200, response.text


async def shop(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> tuple[Tenant, list[str]]:
    """A shop with a point per euro, two branches (north, south) and two customers."""
    tenant = await make_tenant(client)
    await earn_rule(engine, tenant.vendor_id)
    async with make_sessionmaker(engine).begin() as db:
        await make_branch(db, tenant.vendor_id, "north", name="North")
        await make_branch(db, tenant.vendor_id, "south", name="South")
    emails = [f"{name}.{tenant.vendor_id}@example.com" for name in ("anna", "ben")]
    for email in emails:
        await register(client, tenant, email=email)
    return tenant, emails


async def test_the_figures_per_branch_equal_the_purchases_and_redemptions_folded_or_not(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """DASHBOARD-5: purchases at two branches and at none and a redemption at one, some folded and
    some written after the fold: each branch's figures are exactly the rows', and the folded part
    sits in branch_totals."""
    tenant, (anna, ben) = await shop(client, engine)
    cake = await reward(client, tenant, point_cost=10)
    assert (await buy(client, tenant, anna, 3000, branch="north")).status_code == 201
    assert (await buy(client, tenant, ben, 1250, branch="south")).status_code == 201
    assert (await buy(client, tenant, ben, 400)).status_code == 201
    assert (await redeem(client, tenant, anna, cake["id"], "r1", branch="north")).status_code == 201
    await fold(client)
    await fold(client)
    folded = await rows(engine, f"SELECT branch_id, purchases FROM branch_totals WHERE vendor_id = {tenant.vendor_id}")
    assert sorted(purchases for _, purchases in folded) == [1, 1, 1]
    assert (await buy(client, tenant, anna, 990, branch="south")).status_code == 201  # not folded yet
    assert (await redeem(client, tenant, ben, cake["id"], "r2", branch="south")).status_code == 201

    today = datetime.now(UTC).date()
    async with make_sessionmaker(engine)() as db:
        shown = await figures_by_branch(db, tenant.vendor_id, date(2000, 1, 1), today)
    names = {f.name: f.branch_id for f in shown}
    assert shown == [
        BranchFigures(
            names["North"], "North", purchases=1, amount=3000, points_earned=30, redemptions=1, points_redeemed=10
        ),
        BranchFigures(
            names["South"], "South", purchases=2, amount=2240, points_earned=21, redemptions=1, points_redeemed=10
        ),
        BranchFigures(None, "No branch", purchases=1, amount=400, points_earned=4),
    ]
    raw = await rows(
        engine,
        "SELECT coalesce(b.name, 'No branch'), count(*), sum(t.total_amount), sum(t.points_earned)"
        f" FROM transactions t LEFT JOIN branches b ON b.id = t.branch_id WHERE t.vendor_id = {tenant.vendor_id}"
        " GROUP BY 1 ORDER BY 1",
    )
    assert raw == sorted((f.name, f.purchases, f.amount, f.points_earned) for f in shown)


async def test_the_migration_fills_the_past_in_batches_beside_the_fold_and_counts_each_row_once(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """DASHBOARD-6: the totals emptied and the markers at 0 (the state the migration finds), the
    migration's batches (two ids at a time) and folds run together; then the totals equal the raw
    rows behind the markers, which have reached the watermarks."""
    tenant, (anna, ben) = await shop(client, engine)
    cake = await reward(client, tenant, point_cost=5)
    for n, cents in enumerate((1000, 2000, 700, 1500, 900)):
        branch = {"branch": ("north", "south")[n % 2]} if n < 4 else {}
        assert (await buy(client, tenant, (anna, ben)[n % 2], cents, **branch)).status_code == 201
    for n in range(3):
        made = await redeem(client, tenant, ben, cake["id"], f"m{n}", branch="south")
        assert made.status_code == 201, made.text
    await fold(client)
    await fold(client)
    async with engine.begin() as conn:
        await conn.execute(text("SELECT 1 FROM ledger_totals_watermark WHERE id = 1 FOR UPDATE"))
        await conn.execute(text("DELETE FROM branch_totals"))
        await conn.execute(
            text("UPDATE ledger_totals_watermark SET branch_purchases_through = 0, branch_entries_through = 0")
        )

    fill = backfill_statement()

    async def migrate() -> int:
        batches = 0
        while True:
            async with engine.begin() as conn:
                behind = (await conn.execute(fill, {"batch": 2})).one().behind
            batches += 1
            if not behind:
                return batches

    async def folds() -> None:
        for _ in range(3):
            await fold_ledger(make_sessionmaker(engine), batch=3)

    batches, _ = await asyncio.gather(migrate(), folds())
    assert batches >= 1
    await fold_ledger(make_sessionmaker(engine))
    marks = await rows(
        engine,
        "SELECT branch_purchases_through = purchases_folded_through, branch_entries_through = folded_through"
        " FROM ledger_totals_watermark",
    )
    assert marks == [(True, True)]
    assert await rows(engine, FOLDED) == await rows(engine, RAW)
    mine = [row for row in await rows(engine, FOLDED) if row[0] == tenant.vendor_id]
    assert sum(row[3] for row in mine) == 5
    assert sum(row[6] for row in mine) == 3
