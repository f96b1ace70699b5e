"""Where card mails go: over SMTP when ``LOYALTY_SMTP_HOST`` is set, else as ``.eml`` files under
``.loyalty/outbox/`` (docs/deployment.md). Either way the same message for the same acceptance: a file is
named for its Message-ID, so a repeat after a crash rewrites the same file."""

from __future__ import annotations

import asyncio
import hashlib
import os
import smtplib
import stat
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path
from typing import Protocol

from loyalty_core.passes.models import MailStatus

SMTP_TIMEOUT_SECONDS = 30


class MailRejected(Exception):
    """The SMTP server refused the mail for good (a 5xx answer): trying again would not help."""


class Mailer(Protocol):
    async def deliver(self, message: EmailMessage) -> MailStatus:
        """Hand the message on; ``MailRejected`` when it was refused for good, any other error when it
        was not taken this time (the job retries it)."""
        ...


@dataclass(frozen=True)
class SmtpMailer:
    host: str
    port: int

    async def deliver(self, message: EmailMessage) -> MailStatus:
        await asyncio.to_thread(self._send, message)
        return MailStatus.SENT

    def _send(self, message: EmailMessage) -> None:
        try:
            with smtplib.SMTP(self.host, self.port, timeout=SMTP_TIMEOUT_SECONDS) as smtp:
                smtp.send_message(message)
        except smtplib.SMTPRecipientsRefused as refused:
            if all(code >= 500 for code, _ in refused.recipients.values()):
                raise MailRejected(f"recipient refused: {sorted(c for c, _ in refused.recipients.values())}") from None
            raise
        except smtplib.SMTPResponseException as answered:
            if answered.smtp_code >= 500:
                raise MailRejected(f"refused with {answered.smtp_code}") from None
            raise


PRIVATE_FOLDER = 0o700
PRIVATE_FILE = 0o600


@dataclass(frozen=True)
class FileMailer:
    directory: Path

    async def deliver(self, message: EmailMessage) -> MailStatus:
        await asyncio.to_thread(self._write, message)
        return MailStatus.WRITTEN

    def _write(self, message: EmailMessage) -> None:
        # the mails hold card codes and passes: readable by the service's user only, whatever the
        # umask, and a folder found more open is closed again
        self.directory.mkdir(mode=PRIVATE_FOLDER, parents=True, exist_ok=True)
        if stat.S_IMODE(self.directory.stat().st_mode) != PRIVATE_FOLDER:
            self.directory.chmod(PRIVATE_FOLDER)
        name = hashlib.sha256(str(message["Message-ID"]).encode()).hexdigest()[:32]
        target = self.directory / f"{name}.eml"
        partial = target.with_suffix(f".{os.getpid()}.part")
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
        with os.fdopen(descriptor, "wb") as file:
            os.fchmod(file.fileno(), PRIVATE_FILE)  # a part left by a crash keeps its old mode otherwise
            file.write(message.as_bytes())
        partial.replace(target)  # a reader never sees half a mail


def mailer_for(smtp_host: str | None, smtp_port: int, home: Path) -> Mailer:
    if smtp_host:
        return SmtpMailer(smtp_host, smtp_port)
    return FileMailer(home / "outbox")
