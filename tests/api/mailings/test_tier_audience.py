"""The audience's ``tiers`` and the ``{tier}`` placeholder, over a ladder and the monthly amounts the
till keeps (written here directly, with ids of their own: the ladder's API is the tiers area's)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import text

from loyalty_core.db import make_engine
from tests.support.mailings import MAILING_PLAN, Client, address, consenting, draft, run_job, send, text_of
from tests.support.smtp import Inbox
from tests.support.tenants import Tenant, make_tenant

LADDER = """
WITH ladder AS (
  INSERT INTO tier_ladders (id, vendor_id, basis, period_months, grace_months, created_at, updated_at)
  VALUES (:v, :v, 'spend', 12, 0, now(), now()) RETURNING id
)
INSERT INTO tiers (id, vendor_id, ladder_id, position, key, name, threshold, multiplier_percent, created_at, updated_at)
SELECT :v * 10 + t.position, :v, ladder.id, t.position, t.key, t.name, t.threshold, 100, now(), now()
FROM ladder, (VALUES (0, 'bronze', 'Bronze', 0), (1, 'gold', 'Gold', 10000)) AS t(position, key, name, threshold)
"""


async def _ladder(database_url: str, tenant: Tenant, gold_customer: int) -> None:
    engine = make_engine(database_url)
    month = datetime.now(UTC).date().replace(day=1)
    try:
        async with engine.begin() as conn:
            await conn.execute(text(LADDER), {"v": tenant.vendor_id})
            await conn.execute(
                text(
                    "INSERT INTO tier_months (vendor_id, customer_id, month, spend, points)"
                    " VALUES (:v, :c, :m, 25000, 250)"
                ),
                {"v": tenant.vendor_id, "c": gold_customer, "m": month},
            )
    finally:
        await engine.dispose()


async def test_the_tiers_criterion_and_the_tier_placeholder(
    mail_client: Client, smtp: tuple[Inbox, int], database_url: str
) -> None:
    """MAIL-4, MAIL-5: ``tiers`` names keys of the current ladder and selects who holds one of them;
    ``{tier}`` is the tier's name."""
    inbox, _ = smtp
    tenant = await make_tenant(mail_client, plan=MAILING_PLAN)
    rich, plain = address("gold"), address("bronze")
    gold = await consenting(mail_client, tenant, email=rich)
    await consenting(mail_client, tenant, email=plain)
    await _ladder(database_url, tenant, gold["id"])
    made = await draft(mail_client, tenant, body="You are {tier}.", audience={"tiers": ["gold"]})
    assert (await send(mail_client, tenant, made["id"]))["audience_size"] == 1
    everyone = await draft(mail_client, tenant, body="You are {tier}.", audience={"tiers": ["gold", "bronze"]})
    assert (await send(mail_client, tenant, everyone["id"]))["audience_size"] == 2
    await run_job(mail_client)
    assert [text_of(m).splitlines()[0] for m in inbox.to(rich)] == ["You are Gold.", "You are Gold."]
    assert [text_of(m).splitlines()[0] for m in inbox.to(plain)] == ["You are Bronze."]
