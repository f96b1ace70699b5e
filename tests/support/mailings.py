"""Campaign mail through the admin API: drafts, sends, the job run by name, and customers who
consent (the mailings' tests of tests/api/mailings)."""

from __future__ import annotations

import uuid
from email.message import EmailMessage
from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.app import ADMIN
from tests.support.customers import register
from tests.support.tenants import Tenant, admin

Client = AsyncTestClient[Litestar]
PUBLIC = "https://loyalty.example"
MAILING_PLAN: dict[str, Any] = {"features": {"campaign_mail": True}}
BODY = "Hello {first_name}, you have {balance} points ({card_code})."


def address(local: str) -> str:
    """Unique per run: other tests' mails go to other addresses."""
    return f"{local}-{uuid.uuid4().hex[:10]}@example.com"


def mailings(tenant: Tenant) -> str:
    return f"/admin/v1/vendors/{tenant.vendor_id}/mailings"


async def run_job(client: Client, job: str = "campaign-mails") -> dict[str, Any]:
    response = await client.post(f"/admin/v1/jobs/{job}/run", headers=ADMIN)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["data"]["result"]
    return result


async def draft(client: Client, tenant: Tenant, **body: Any) -> dict[str, Any]:
    made: dict[str, Any] = await admin(
        client, "POST", mailings(tenant), {"subject": "Spring news", "body": BODY, **body}
    )
    return made


async def send(client: Client, tenant: Tenant, mailing_id: int, **body: Any) -> dict[str, Any]:
    response = await client.post(f"{mailings(tenant)}/{mailing_id}/send", json=body, headers=ADMIN)
    assert response.status_code == 202, response.text
    sent: dict[str, Any] = response.json()["data"]
    return sent


async def shown(client: Client, tenant: Tenant, mailing_id: int) -> dict[str, Any]:
    found: dict[str, Any] = await admin(client, "GET", f"{mailings(tenant)}/{mailing_id}")
    return found


async def consenting(client: Client, tenant: Tenant, **body: Any) -> dict[str, Any]:
    return await register(client, tenant, marketing_consent=True, marketing_consent_statement_version="v1", **body)


def text_of(message: EmailMessage) -> str:
    body = message.get_body(("plain",))
    assert body is not None
    content: str = body.get_content()
    return content


def counts(**given: int) -> dict[str, int]:
    """A mailing's counts: zero except those given."""
    names = ("sent", "failed", "skipped_inactive", "skipped_no_email", "skipped_no_consent", "skipped_suppressed")
    return {name: given.get(name, 0) for name in (*names, "pending")}
