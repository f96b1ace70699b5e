"""The card-mails sweep under its job's limits (FAULT-2: every accepted card mail is sent,
none twice). Found by the worker-kill test of tests/deployment: SAQ gave the sweep its default 10 s
timeout, cancelled it mid-SMTP once a backlog took longer, and the cancelled attempt rolled back after
the server had the mail, so the next sweep sent it again."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from saq import Queue
from sqlalchemy import text

from loyalty_api.adapters.mail_sender import SmtpMailer
from loyalty_api.adapters.pass_platforms import WalletPasses, wallet_passes
from loyalty_api.app import create_app
from loyalty_api.jobs.card_mails import SWEEP_SECONDS, card_mails
from loyalty_api.jobs.context import JobContext
from loyalty_api.settings import Settings
from loyalty_api.worker import CRON_TIMEOUT_SECONDS, make_worker
from loyalty_core.clock import SystemClock
from loyalty_core.db import make_engine, make_sessionmaker
from loyalty_wallet_pass.identity import new_rsa_key, private_key_pem
from loyalty_wallet_pass.platform import LocalPassPlatform
from tests.support.app import ADMIN_TOKEN
from tests.support.customers import register
from tests.support.smtp import Inbox, smtp_server
from tests.support.tenants import Tenant, make_tenant

Client = AsyncTestClient[Litestar]
HOLD = 0.5


@pytest.fixture(scope="module")
def passes(settings: Settings) -> WalletPasses:
    assert settings.encryption_key is not None
    return wallet_passes(settings.encryption_key, private_key_pem(new_rsa_key()), LocalPassPlatform())


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    with smtp_server(hold=HOLD) as server:
        yield server


@pytest.fixture
async def client(settings: Settings, passes: WalletPasses, tmp_path: Path) -> AsyncIterator[Client]:
    """No worker of its own: the test runs the sweep itself."""
    own = msgspec.structs.replace(settings, admin_token=ADMIN_TOKEN, worker="external", home=tmp_path)
    async with AsyncTestClient(app=create_app(own, passes=passes)) as made:
        yield made


@pytest.fixture
async def job_context(database_url: str, passes: WalletPasses, smtp: tuple[Inbox, int]) -> AsyncIterator[JobContext]:
    engine = make_engine(database_url)
    try:
        yield JobContext(
            sessionmaker=make_sessionmaker(engine),
            clock=SystemClock(),
            passes=passes,
            mailer=SmtpMailer("127.0.0.1", smtp[1]),
            mail_from="cards@shop.example",
        )
    finally:
        await engine.dispose()


async def _queued_mail(client: Client, tenant: Tenant) -> str:
    to = f"sweep-{uuid.uuid4().hex[:10]}@example.com"
    customer = await register(client, tenant, email=to)
    response = await client.post(f"/api/v1/customers/{customer['id']}/send-card", headers=tenant.headers)
    assert response.status_code == 202, response.text
    return to


async def _statuses(database_url: str, addresses: list[str]) -> list[str]:
    engine = make_engine(database_url)
    try:
        async with engine.connect() as conn:
            rows = await conn.execute(
                text("SELECT status FROM card_mails WHERE to_address = ANY(:a) ORDER BY id"), {"a": addresses}
            )
            return [str(r[0]) for r in rows]
    finally:
        await engine.dispose()


async def test_a_sweep_cancelled_mid_smtp_records_the_mail_it_handed_over(
    client: Client, job_context: JobContext, smtp: tuple[Inbox, int], database_url: str
) -> None:
    """The server holds the mail unanswered when the sweep's job is cancelled: the delivery runs on to
    its commit, the row ends ``sent``, and the next sweep sends nothing again."""
    inbox, _ = smtp
    await card_mails(job_context)  # what earlier tests left due
    to = await _queued_mail(client, await make_tenant(client))
    sweep = asyncio.create_task(card_mails(job_context))
    while inbox.in_flight == 0:
        assert not sweep.done()
        await asyncio.sleep(0.01)
    sweep.cancel()
    with pytest.raises(asyncio.CancelledError):
        await sweep
    for _ in range(200):
        if await _statuses(database_url, [to]) == ["sent"]:
            break
        await asyncio.sleep(0.05)
    assert await _statuses(database_url, [to]) == ["sent"]

    assert await card_mails(job_context) == {}
    assert len(inbox.to(to)) == 1


async def test_a_sweep_past_its_budget_leaves_the_rest_to_the_next(
    client: Client, job_context: JobContext, smtp: tuple[Inbox, int], database_url: str
) -> None:
    """A sweep starts no delivery once its budget is spent; the next sweep delivers the rest, each
    mail once."""
    inbox, _ = smtp
    await card_mails(job_context)  # what earlier tests left due
    tenant = await make_tenant(client)
    addresses = [await _queued_mail(client, tenant) for _ in range(3)]

    assert await card_mails(job_context, budget=HOLD / 2) == {"sent": 1, "left": 2}
    assert await _statuses(database_url, addresses) == ["sent", "queued", "queued"]
    assert await card_mails(job_context) == {"sent": 2}
    assert [len(inbox.to(a)) for a in addresses] == [1, 1, 1]


def test_scheduled_jobs_outlast_the_sweep_budget(settings: Settings, database_url: str) -> None:
    """Every scheduled job gets the worker's timeout, past the sweep's budget (a delivery that runs
    over it finishes anyway, as the first test shows)."""
    queue = Queue.from_url("redis://127.0.0.1:1")  # never connected: only the worker's jobs are read
    worker = make_worker(
        queue, JobContext(sessionmaker=make_sessionmaker(make_engine(database_url)), clock=SystemClock())
    )
    assert {job.timeout for job in worker.cron_jobs} == {CRON_TIMEOUT_SECONDS}
    assert SWEEP_SECONDS < CRON_TIMEOUT_SECONDS
