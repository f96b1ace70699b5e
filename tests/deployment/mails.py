"""The card mails of a deployment's database, and the wait until the accepted ones are all delivered."""

from __future__ import annotations

import asyncio

import psycopg

from tests.support.smtp import Inbox


def mail_rows(database_url: str, customer_ids: list[int]) -> list[tuple[int, str, str]]:
    """(customer id, Message-ID, status) of every card mail of these customers."""
    url = database_url.replace("postgresql+psycopg://", "postgresql://", 1)
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT customer_id, message_id, status FROM card_mails WHERE customer_id = ANY(%s)", (customer_ids,)
        ).fetchall()
    return [(int(c), str(m), str(s)) for c, m, s in rows]


def queued_message_ids(database_url: str) -> set[str]:
    """Message-IDs of the mails not delivered yet (as committed: a dead worker's update is not)."""
    url = database_url.replace("postgresql+psycopg://", "postgresql://", 1)
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT message_id FROM card_mails WHERE status = 'queued'").fetchall()
    return {str(r[0]) for r in rows}


async def drained(inbox: Inbox, database_url: str, customer_ids: list[int], within: float) -> float:
    """Wait until every mail of these customers is marked sent (none is sent after that) and has
    reached the server, or ``within`` seconds have passed; answers the seconds waited."""
    loop = asyncio.get_running_loop()
    began = loop.time()
    while loop.time() < began + within:
        rows = await asyncio.to_thread(mail_rows, database_url, customer_ids)
        if {s for _, _, s in rows} == {"sent"} and {m for _, m, _ in rows} <= set(inbox.message_ids()):
            break
        await asyncio.sleep(0.5)
    return loop.time() - began
