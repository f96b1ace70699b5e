"""A card mail that cannot be built or sent ends ``failed`` after its attempts, and is never retried
for ever (PASS-6): the outbox lists it under ``status=failed`` and
``GET /metrics`` counts it. Found with a shop's name holding CR/LF (stored before names were
checked): every card mail of the shop failed at header time and was retried hourly without end."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text

from loyalty_api.adapters.pass_platforms import WalletPasses, wallet_passes
from loyalty_api.app import create_app
from loyalty_api.settings import Settings
from loyalty_core.db import make_engine
from loyalty_core.passes.services.outbox import MAX_ATTEMPTS
from loyalty_wallet_pass.identity import new_rsa_key, private_key_pem
from loyalty_wallet_pass.platform import LocalPassPlatform
from tests.support.app import ADMIN, ADMIN_TOKEN
from tests.support.customers import register
from tests.support.tenants import admin, make_tenant

Client = AsyncTestClient[Litestar]


@pytest.fixture
async def quiet_client(settings: Settings, tmp_path: Path) -> AsyncIterator[Client]:
    """The service with no SMTP server and no worker of its own: jobs run when the test says."""
    assert settings.encryption_key is not None
    passes: WalletPasses = wallet_passes(settings.encryption_key, private_key_pem(new_rsa_key()), LocalPassPlatform())
    own = msgspec.structs.replace(settings, admin_token=ADMIN_TOKEN, worker="external", home=tmp_path)
    async with AsyncTestClient(app=create_app(own, passes=passes)) as client:
        yield client


async def _sql(database_url: str, statement: str, **values: Any) -> Any:
    engine = make_engine(database_url)
    try:
        async with engine.begin() as conn:
            result = await conn.execute(text(statement), values)
            return result.mappings().all() if result.returns_rows else None
    finally:
        await engine.dispose()


async def _failed_metric(client: Client) -> int:
    scraped = await client.get("/metrics", headers=ADMIN)
    assert scraped.status_code == 200
    found = re.search(r'^loyalty_card_mails\{status="failed"\} (\d+)', scraped.text, re.MULTILINE)
    assert found is not None, scraped.text
    return int(float(found.group(1)))


async def test_a_mail_that_cannot_be_built_ends_failed_after_its_attempts(
    quiet_client: Client, database_url: str
) -> None:
    tenant = await make_tenant(quiet_client)
    await _sql(
        database_url,
        "UPDATE vendors SET name = :n WHERE id = :v",
        n="Bakkerij\r\nBcc: x@example.org",
        v=tenant.vendor_id,
    )
    to = f"gus-{uuid.uuid4().hex[:10]}@example.com"
    customer = await register(quiet_client, tenant, email=to)
    failed_before = await _failed_metric(quiet_client)
    start = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=1)
    await admin(quiet_client, "PUT", "/admin/v1/test-clock", {"now": start.isoformat()})
    try:
        sent = await quiet_client.post(f"/api/v1/customers/{customer['id']}/send-card", headers=tenant.headers)
        assert sent.status_code == 202, sent.text
        mail = "SELECT status, attempts, next_attempt_at FROM card_mails WHERE customer_id = :c"
        for hour in range(1, 2 * MAX_ATTEMPTS + 1, 2):
            result = await admin(quiet_client, "POST", "/admin/v1/jobs/card-mails/run")
            [row] = await _sql(database_url, mail, c=customer["id"])
            if row["status"] != "queued":
                break
            now = (start + timedelta(hours=hour)).isoformat()
            await admin(quiet_client, "PUT", "/admin/v1/test-clock", {"now": now})
        assert (row["status"], row["attempts"], row["next_attempt_at"]) == ("failed", MAX_ATTEMPTS, None)
        assert result["result"].get("failed") == 1
        later = (start + timedelta(days=30)).isoformat()
        await admin(quiet_client, "PUT", "/admin/v1/test-clock", {"now": later})
        await admin(quiet_client, "POST", "/admin/v1/jobs/card-mails/run")
        [row] = await _sql(database_url, mail, c=customer["id"])
        assert (row["status"], row["attempts"]) == ("failed", MAX_ATTEMPTS)
    finally:
        await quiet_client.delete("/admin/v1/test-clock", headers=ADMIN)
    failed = await admin(quiet_client, "GET", "/admin/v1/outbox?status=failed&per_page=100")
    assert [(i["to"], i["status"]) for i in failed["data"] if i["to"] == to] == [(to, "failed")]
    delivered = await admin(quiet_client, "GET", "/admin/v1/outbox?per_page=100")
    assert [i for i in delivered["data"] if i["to"] == to] == []
    assert await _failed_metric(quiet_client) == failed_before + 1
