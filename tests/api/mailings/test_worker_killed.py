"""A worker killed with ``kill -9`` in the middle of a 2,000-recipient mailing, then the job run again:
no customer gets two messages, and every recipient is accounted for in ``counts`` (MAIL-9)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections import Counter

from sqlalchemy import text

from loyalty_core.db import make_engine
from tests.support.mailings import MAILING_PLAN, Client, address, consenting, draft, run_job, send, shown
from tests.support.smtp import Inbox
from tests.support.tenants import make_tenant

RECIPIENTS = 2000


async def test_a_worker_killed_mid_send_sends_nobody_twice_and_accounts_for_everyone(
    mail_client: Client, smtp: tuple[Inbox, int], database_url: str
) -> None:
    """MAIL-8, MAIL-9: the killed worker's messages in flight are counted ``failed``; the run after it
    sends the rest; the server took at most one message per customer; the counts add up."""
    tenant = await make_tenant(mail_client, plan=MAILING_PLAN)
    engine = make_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.execute(
                text(
                    "INSERT INTO customers (id, vendor_id, first_name, email, locale, status, marketing_consent,"
                    " created_at, updated_at) SELECT nextval('customers_id_seq'), :vendor, 'Fan ' || n,"
                    " 'fan' || n || '-' || :vendor || '@crash.example', 'nl', 'active', true, now(), now()"
                    " FROM generate_series(1, :n) n"
                ),
                {"vendor": tenant.vendor_id, "n": RECIPIENTS},
            )
    finally:
        await engine.dispose()
    made = await draft(mail_client, tenant)
    assert (await send(mail_client, tenant, made["id"]))["audience_size"] == RECIPIENTS

    inbox, port = smtp
    inbox.hold = 0.002  # each message held a moment: the kill lands mid-send
    worker = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.support.campaign_sender", database_url, str(port), start_new_session=True
    )
    try:
        for _ in range(3000):  # up to a minute
            if len(inbox.received) >= 300:
                break
            await asyncio.sleep(0.02)
        assert len(inbox.received) >= 300, "the worker sent too little before the kill"
    finally:
        os.kill(worker.pid, signal.SIGKILL)
        await asyncio.wait_for(worker.wait(), timeout=10)
    assert len(inbox.received) < RECIPIENTS
    inbox.hold = 0.0
    for _ in range(20):
        await run_job(mail_client)
        if (await shown(mail_client, tenant, made["id"]))["status"] == "sent":
            break
    received = [str(m["To"]) for m in inbox.received]

    done = await shown(mail_client, tenant, made["id"])
    assert done["status"] == "sent"
    counts = done["counts"]
    assert sum(counts.values()) == RECIPIENTS
    assert counts["pending"] == 0
    assert counts["sent"] + counts["failed"] == RECIPIENTS
    twice = [address for address, n in Counter(received).items() if n > 1]
    assert twice == []
    assert counts["sent"] <= len(received) <= RECIPIENTS
    assert counts["failed"] >= len(received) - counts["sent"]


async def test_concurrent_runs_send_each_message_once(mail_client: Client, smtp: tuple[Inbox, int]) -> None:
    """MAIL-8, MAIL-9: two runs of the job at once: the mailing's lock lets one send it, the other
    finds it busy; every member gets exactly one message."""
    inbox, _ = smtp
    tenant = await make_tenant(mail_client, plan=MAILING_PLAN)
    wanted = {address(f"twice{n}") for n in range(30)}
    for to in wanted:
        await consenting(mail_client, tenant, email=to)
    made = await draft(mail_client, tenant)
    await send(mail_client, tenant, made["id"])
    inbox.hold = 0.01
    await asyncio.gather(run_job(mail_client), run_job(mail_client))
    await run_job(mail_client)
    got = Counter(str(m["To"]) for m in inbox.received if str(m["To"]) in wanted)
    assert set(got) == wanted
    assert set(got.values()) == {1}
    assert (await shown(mail_client, tenant, made["id"]))["counts"]["sent"] == len(wanted)
