"""A real SMTP server for mail tests (aiosmtpd, in its own thread): it keeps every message it
accepts and can be told to refuse the next few, as a server that is briefly unwell would, or certain
recipients, as a server without their mailbox would, or to hold
each accepted message a moment before answering (a sender killed then has the mail sent but not yet
acknowledged: the window where at-least-once delivery repeats a mail)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller

from tests.support.ports import free_port


@dataclass
class Inbox:
    """What the server took, and how many DATA commands it will still refuse, and how (451 unless
    told otherwise)."""

    received: list[EmailMessage] = field(default_factory=list)
    sources: list[bytes] = field(default_factory=list)
    """Each received message's bytes as they came, beside ``received``."""
    refuse: int = 0
    refused: int = 0
    refuse_with: str = "451 4.3.0 Try again later"
    hold: float = 0.0
    """Seconds between keeping a message and answering 250 for it."""
    in_flight: int = 0
    """Messages kept whose 250 is not answered yet."""
    refuse_rcpt: dict[str, str] = field(default_factory=dict)
    """Recipients answered at RCPT TO with the answer given (a mailbox that does not exist: 550)."""

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str, rcpt_options: list[str]) -> str:
        if address in self.refuse_rcpt:
            return self.refuse_rcpt[address]
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if self.refuse > 0:
            self.refuse -= 1
            self.refused += 1
            return self.refuse_with
        parsed = message_from_bytes(envelope.content, policy=policy.default)
        assert isinstance(parsed, EmailMessage)
        self.received.append(parsed)
        self.sources.append(bytes(envelope.content))
        if self.hold:
            self.in_flight += 1
            try:
                await asyncio.sleep(self.hold)
            finally:
                self.in_flight -= 1
        return "250 OK"

    def source_of(self, message: EmailMessage) -> bytes:
        """The bytes ``message`` came as (a parsed message written out again may fold its headers
        otherwise)."""
        return next(source for kept, source in zip(self.received, self.sources, strict=True) if kept is message)

    def message_ids(self) -> list[str]:
        return [str(m["Message-ID"]) for m in self.received]

    def to(self, address: str) -> list[EmailMessage]:
        return [m for m in self.received if m["To"] == address]

    async def wait_for(self, address: str, count: int = 1, within: float = 20.0) -> list[EmailMessage]:
        deadline = asyncio.get_running_loop().time() + within
        while len(self.to(address)) < count:
            assert asyncio.get_running_loop().time() < deadline, f"no mail for {address} within {within} s"
            await asyncio.sleep(0.05)
        return self.to(address)


@contextmanager
def smtp_server(hold: float = 0.0) -> Iterator[tuple[Inbox, int]]:
    inbox = Inbox(hold=hold)
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()
