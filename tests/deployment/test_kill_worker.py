"""FAULT-2: the job worker is killed with ``kill -9`` while it delivers card mails, and restarted; every
accepted send-card is then delivered to the SMTP server (aiosmtpd, started here), each under the
Message-ID fixed at its acceptance.

What the code promises (services/api/src/loyalty_api/jobs/card_mails.py): a mail's row stays locked
from the claim to the status update, so two workers never send one mail together, and a mail whose
sender died is sent by the next attempt (the restarted worker's SAQ retry or the per-minute
``card-mails`` sweep). A sender killed after the SMTP server took a mail and before the commit sends
it again with the same Message-ID: at-least-once, recognisable, the only repeat possible (docs/
decisions.md, "Card mail"). So the test holds every accepted mail to exactly one distinct Message-ID
and every repeat to a mail a kill left sent but unrecorded. (It found a repeat without a kill: SAQ's
10 s default timeout cancelled the sweep mid-SMTP; tests/api/passes/test_card_mail_sweep.py.)

Bounded by ``LOYALTY_FAULT_SECONDS`` (the time the worker is being killed, default 20).
"""

from __future__ import annotations

import asyncio
import collections
import os
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.deployment.mails import drained, mail_rows, queued_message_ids
from tests.deployment.shop import open_shop, register_customers, send_card_path
from tests.support.deployment import Deployment
from tests.support.smtp import Inbox, smtp_server

FAULT_SECONDS = float(os.environ.get("LOYALTY_FAULT_SECONDS", "20"))
SENDS_PER_SECOND = 3
DRAIN_SECONDS = 200
"""Longest wait for the last mail after the faults: a killed delivery is retried by the next minute's
sweep, or by SAQ once the job's 120 s timeout has passed and the queue's sweep notices."""
RESTART_SECONDS = 30
"""Longest wait for a restarted worker to deliver again (its start imports the whole service)."""
HOLD_SECONDS = 0.3
"""The SMTP server holds each kept mail this long before its 250, so kills land mid-delivery."""


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    with smtp_server(hold=HOLD_SECONDS) as server:
        yield server


@pytest.fixture
def deployment_env(smtp: tuple[Inbox, int]) -> dict[str, str]:
    return {"LOYALTY_SMTP_HOST": "127.0.0.1", "LOYALTY_SMTP_PORT": str(smtp[1])}


async def _kill_worker_repeatedly(deployment: Deployment, inbox: Inbox, seconds: float) -> tuple[int, int, set[str]]:
    """Kill and restart the worker until ``seconds`` have passed. Each kill waits until the worker is
    delivering again (a new mail reaches the server, up to ``RESTART_SECONDS``); every other kill then
    lands at once, while the server holds that mail unanswered, the others a moment later, in the
    next job or between jobs. Answers the kills, how many found a mail held, and the mails a kill left
    sent but not recorded (kept by the server, still queued in the database once the worker is dead)."""
    loop = asyncio.get_running_loop()
    until = loop.time() + seconds
    kills = held = 0
    at_risk: set[str] = set()
    while loop.time() < until:
        seen = len(inbox.received)
        deadline = loop.time() + RESTART_SECONDS
        while len(inbox.received) == seen and loop.time() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        if kills % 2:
            await asyncio.sleep(HOLD_SECONDS * 1.5)
        held += inbox.in_flight > 0
        await asyncio.to_thread(deployment.kill, "worker")
        at_risk |= set(inbox.message_ids()) & await asyncio.to_thread(queued_message_ids, deployment.database_url)
        kills += 1
        await asyncio.to_thread(deployment.start, "worker")
    return kills, held, at_risk


async def _send_cards(
    clients: list[httpx.AsyncClient], token: str, customers: list[dict[str, Any]], seconds: float
) -> dict[int, int]:
    """One send-card per customer, spread over ``seconds``, alternating the two API processes and the
    two forms; answers each customer's status."""
    headers = {"Authorization": f"Bearer {token}"}
    answers: dict[int, int] = {}
    pause = min(1 / SENDS_PER_SECOND, seconds / max(1, len(customers)))
    for n, customer in enumerate(customers):
        client = clients[n % len(clients)]
        response = await client.post(send_card_path(customer, by_external_id=n % 4 >= 2), headers=headers)
        answers[customer["id"]] = response.status_code
        await asyncio.sleep(pause)
    return answers


async def test_every_accepted_card_mail_is_delivered_through_worker_kills(
    deployment: Deployment, clients: list[httpx.AsyncClient], smtp: tuple[Inbox, int]
) -> None:
    inbox, _ = smtp
    shop = await open_shop(clients[0], deployment.admin_token)
    customers = await register_customers(clients[0], shop, max(8, int(FAULT_SECONDS * SENDS_PER_SECOND)))

    answers, (kills, held, at_risk) = await asyncio.gather(
        _send_cards(clients, shop.token, customers, FAULT_SECONDS),
        _kill_worker_repeatedly(deployment, inbox, FAULT_SECONDS),
    )
    accepted = [c for c, status in answers.items() if status == 202]
    assert collections.Counter(answers.values()) == {202: len(customers)}

    rows = mail_rows(deployment.database_url, accepted)
    assert sorted(c for c, _, _ in rows) == sorted(accepted)  # one mail row per accepted send
    expected = {m for _, m, _ in rows}
    drained_in = await drained(inbox, deployment.database_url, accepted, DRAIN_SECONDS)
    received = collections.Counter(inbox.message_ids())
    repeats = sum(n - 1 for n in received.values())
    print(
        f"\nK2: {len(accepted)} sends accepted, {kills} worker kills ({held} with a mail held unanswered), "
        f"{len(received)} distinct Message-IDs delivered, {repeats} repeated; "
        f"the last delivered {drained_in:.1f} s after the faults"
    )
    assert set(received) == expected
    assert {s for _, _, s in mail_rows(deployment.database_url, accepted)} == {"sent"}
    # a repeat is the same mail again, and only of a mail the server had taken when a kill landed
    repeated = {message_id for message_id, n in received.items() if n > 1}
    assert repeated <= at_risk
    for message_id in repeated:
        copies = [m for m in inbox.received if m["Message-ID"] == message_id]
        assert len({(m["To"], m["Subject"]) for m in copies}) == 1
