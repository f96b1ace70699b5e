"""The audience's ``tiers`` and the ``{tier}`` placeholder, over a ladder and the monthly amounts the
till keeps (written here directly, with ids of their own: the ladder's API is the tiers area's), by
the tier rule the customer resource shows: grace months, a merge family's months, and no tier while
the plan lacks ``tiers`` (TIER-3, TIER-5)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import text

from loyalty_core.db import make_engine
from tests.support.mailings import MAILING_PLAN, Client, address, consenting, draft, run_job, send, text_of
from tests.support.merges import merge
from tests.support.smtp import Inbox
from tests.support.tenants import Tenant, make_tenant

TIERED_PLAN: dict[str, Any] = {"features": {**MAILING_PLAN["features"], "tiers": True}}

LADDER = """
WITH ladder AS (
  INSERT INTO tier_ladders (id, vendor_id, basis, period_months, grace_months, created_at, updated_at)
  VALUES (:v, :v, 'spend', :period, :grace, now(), now()) RETURNING id
)
INSERT INTO tiers (id, vendor_id, ladder_id, position, key, name, threshold, multiplier_percent, created_at, updated_at)
SELECT :v * 10 + t.position, :v, ladder.id, t.position, t.key, t.name, t.threshold, 100, now(), now()
FROM ladder, (VALUES (0, 'bronze', 'Bronze', 0), (1, 'gold', 'Gold', 10000)) AS t(position, key, name, threshold)
"""


def _months_ago(count: int) -> date:
    today = datetime.now(UTC).date()
    index = today.year * 12 + today.month - 1 - count
    return date(index // 12, index % 12 + 1, 1)


async def _ladder(
    database_url: str, tenant: Tenant, spent: dict[int, tuple[int, date]], *, period: int = 12, grace: int = 0
) -> None:
    """Bronze from 0, Gold from 10,000 cents; ``spent``: per customer, the cents spent in a month."""
    engine = make_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.execute(text(LADDER), {"v": tenant.vendor_id, "period": period, "grace": grace})
            for customer, (cents, month) in spent.items():
                await conn.execute(
                    text(
                        "INSERT INTO tier_months (vendor_id, customer_id, month, spend, points)"
                        " VALUES (:v, :c, :m, :s, 0)"
                    ),
                    {"v": tenant.vendor_id, "c": customer, "m": month, "s": cents},
                )
    finally:
        await engine.dispose()


async def test_the_tiers_criterion_and_the_tier_placeholder(
    mail_client: Client, smtp: tuple[Inbox, int], database_url: str
) -> None:
    """MAIL-4, MAIL-5: ``tiers`` names keys of the current ladder and selects who holds one of them;
    ``{tier}`` is the tier's name."""
    inbox, _ = smtp
    tenant = await make_tenant(mail_client, plan=TIERED_PLAN)
    rich, plain = address("gold"), address("bronze")
    gold = await consenting(mail_client, tenant, email=rich)
    await consenting(mail_client, tenant, email=plain)
    await _ladder(database_url, tenant, {gold["id"]: (25000, _months_ago(0))})
    made = await draft(mail_client, tenant, body="You are {tier}.", audience={"tiers": ["gold"]})
    assert (await send(mail_client, tenant, made["id"]))["audience_size"] == 1
    everyone = await draft(mail_client, tenant, body="You are {tier}.", audience={"tiers": ["gold", "bronze"]})
    assert (await send(mail_client, tenant, everyone["id"]))["audience_size"] == 2
    await run_job(mail_client)
    assert [text_of(m).splitlines()[0] for m in inbox.to(rich)] == ["You are Gold.", "You are Gold."]
    assert [text_of(m).splitlines()[0] for m in inbox.to(plain)] == ["You are Bronze."]


async def test_grace_months_and_a_merged_familys_months_count_as_the_customer_resource_counts_them(
    mail_client: Client, smtp: tuple[Inbox, int], database_url: str
) -> None:
    """MAIL-4, MAIL-5, TIER-3: over a one-month period with two grace months, a customer who reached
    Gold two months ago still holds it, and so does the account a Gold-spending account was merged
    into (the family's months add up); both are in the `gold` audience and read `Gold`, the one who
    never spent reads `Bronze`, and the closed account is in neither."""
    inbox, _ = smtp
    tenant = await make_tenant(mail_client, plan=TIERED_PLAN)
    graced, kept, closed, plain = address("graced"), address("kept"), address("closed"), address("plain")
    graced_id = (await consenting(mail_client, tenant, email=graced))["id"]
    kept_id = (await consenting(mail_client, tenant, email=kept))["id"]
    closed_id = (await consenting(mail_client, tenant, email=closed))["id"]
    await consenting(mail_client, tenant, email=plain)
    spent = {graced_id: (25000, _months_ago(2)), kept_id: (6000, _months_ago(0)), closed_id: (6000, _months_ago(0))}
    await _ladder(database_url, tenant, spent, period=1, grace=2)
    merged = await merge(mail_client, tenant, closed_id, kept_id)
    assert merged.status_code == 200, merged.text
    gold = await draft(mail_client, tenant, body="You are {tier}.", audience={"tiers": ["gold"]})
    assert (await send(mail_client, tenant, gold["id"]))["audience_size"] == 2
    bronze = await draft(mail_client, tenant, body="You are {tier}.", audience={"tiers": ["bronze"]})
    assert (await send(mail_client, tenant, bronze["id"]))["audience_size"] == 1
    await run_job(mail_client)
    assert [text_of(m).splitlines()[0] for m in inbox.to(graced)] == ["You are Gold."]
    assert [text_of(m).splitlines()[0] for m in inbox.to(kept)] == ["You are Gold."]
    assert [text_of(m).splitlines()[0] for m in inbox.to(plain)] == ["You are Bronze."]
    assert inbox.to(closed) == []


async def test_without_the_plans_tiers_nobody_holds_a_tier(
    mail_client: Client, smtp: tuple[Inbox, int], database_url: str
) -> None:
    """MAIL-4, MAIL-5, TIER-5: while the plan lacks `tiers` the ladder applies to nobody, as the
    customer resource shows: `tiers` matches no one and `{tier}` is empty."""
    inbox, _ = smtp
    tenant = await make_tenant(mail_client, plan=MAILING_PLAN)
    rich = address("unpaid")
    gold = await consenting(mail_client, tenant, email=rich)
    await _ladder(database_url, tenant, {gold["id"]: (25000, _months_ago(0))})
    tiered = await draft(mail_client, tenant, body="You are {tier}.", audience={"tiers": ["gold", "bronze"]})
    assert (await send(mail_client, tenant, tiered["id"]))["audience_size"] == 0
    everyone = await draft(mail_client, tenant, body="You are [{tier}].")
    assert (await send(mail_client, tenant, everyone["id"]))["audience_size"] == 1
    await run_job(mail_client)
    assert [text_of(m).splitlines()[0] for m in inbox.to(rich)] == ["You are []."]
