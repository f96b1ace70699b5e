"""The account mails the service wrote to its outbox folder (no SMTP configured: docs/deployment.md),
read back by their recipient, and the one-time link a mail holds."""

from __future__ import annotations

import re
import time
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path


def mails_to(home: Path, address: str) -> list[EmailMessage]:
    """Every mail to ``address`` under ``home``'s outbox, oldest first."""
    outbox = home / "outbox"
    found = []
    for path in sorted(outbox.glob("*.eml"), key=lambda p: p.stat().st_mtime_ns) if outbox.exists() else []:
        message = BytesParser(policy=policy.default).parsebytes(path.read_bytes())
        assert isinstance(message, EmailMessage)
        if str(message["To"]).lower() == address.lower():
            found.append(message)
    return found


def wait_for_mails(home: Path, address: str, count: int = 1) -> list[EmailMessage]:
    """The mails to ``address`` once there are ``count`` (a served page mails after its answer)."""
    deadline = time.monotonic() + 10
    while len(found := mails_to(home, address)) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(found) == count, [str(m["Subject"]) for m in found]
    return found


def body_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())


def link_in(message: EmailMessage) -> str:
    """The portal path of the mail's one-time link (``/portal/welcome/...`` or ``/portal/reset/...``)."""
    found = re.search(r"(/portal/(?:welcome|reset)/[A-Za-z0-9_-]+)", body_of(message))
    assert found is not None, body_of(message)
    return found.group(1)
