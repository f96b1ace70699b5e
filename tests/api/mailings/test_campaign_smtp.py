"""The campaign SMTP session on its own: a batch in one hand-over, one outcome per message in order,
and a server that is not there (MAIL-21)."""

from __future__ import annotations

import smtplib
from datetime import UTC, datetime
from typing import Any

import pytest

from loyalty_api.adapters.campaign_message import Letter, Letterhead
from loyalty_api.adapters.campaign_smtp import Delivery, Handed, SmtpConnection
from loyalty_core.mailings.rules import with_footer
from tests.support.ports import free_port
from tests.support.smtp import smtp_server

NOW = datetime(2026, 11, 29, 16, 30, tzinfo=UTC)
URL = "https://loyalty.example/unsubscribe/test-copy"


def _letters(*to: str) -> list[Letter]:
    head = Letterhead(shop_name="Bench Bakery", sender="news@shop.example", subject="Spring news")
    return [
        head.letter(
            to=t, text=with_footer("Hi", URL), message_id=f"<mailing-1-{n}@shop.example>", unsubscribe_url=URL, now=NOW
        )
        for n, t in enumerate(to)
    ]


async def test_a_batch_comes_back_one_outcome_per_message_in_order() -> None:
    """MAIL-21: 5xx at RCPT TO refused for good, 4xx later, the rest sent over the session."""
    with smtp_server() as (inbox, port):
        inbox.refuse_rcpt = {"gone@x.example": "550 5.1.1 No such mailbox", "full@x.example": "452 4.2.2 Mailbox full"}
        session = SmtpConnection("127.0.0.1", port)
        try:
            handed = await session.deliver_all(
                _letters("a@x.example", "gone@x.example", "full@x.example", "b@x.example")
            )
        finally:
            await session.close()
    assert [h.delivery for h in handed] == [Delivery.SENT, Delivery.REFUSED, Delivery.LATER, Delivery.SENT]
    assert handed[1] == Handed(Delivery.REFUSED, "recipient [550]")
    assert [str(m["To"]) for m in inbox.received] == ["a@x.example", "b@x.example"]
    assert inbox.sources[0] == _letters("a@x.example")[0].as_sent()


async def test_a_server_that_is_not_there_leaves_the_batch_for_later_after_one_connect(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """MAIL-21: no session to be had: every message of the batch waits for its back-off, and the
    session is tried once, not once a message."""
    tried: list[int] = []
    real = smtplib.SMTP

    def counted(*args: Any, **kwargs: Any) -> smtplib.SMTP:
        tried.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(smtplib, "SMTP", counted)
    session = SmtpConnection("127.0.0.1", free_port())
    handed = await session.deliver_all(_letters("a@x.example", "b@x.example", "c@x.example"))
    assert handed == [Handed(Delivery.LATER, "ConnectionRefusedError")] * 3
    assert len(tried) == 1
