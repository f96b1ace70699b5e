"""A campaign message as it goes out (MAIL-10): plain text in UTF-8 from the service's address with
the shop's name, its stable Message-ID, the RFC 8058 unsubscribe headers, and the link at the end
of the body; and one SMTP connection reused for every message of a run (MAIL-16)."""

from __future__ import annotations

import asyncio
import contextlib
import smtplib
from dataclasses import dataclass, field
from datetime import datetime
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime

from loyalty_api.adapters.mail_sender import SMTP_TIMEOUT_SECONDS, Mailer, MailRejected
from loyalty_core.passes.models import MailStatus

ONE_CLICK = "List-Unsubscribe=One-Click"


def compose(
    *,
    shop_name: str,
    sender: str,
    to: str,
    subject: str,
    text: str,
    message_id: str,
    unsubscribe_url: str,
    now: datetime,
) -> EmailMessage:
    message = EmailMessage()
    local, _, domain = sender.partition("@")
    message["From"] = Address(display_name=shop_name, username=local, domain=domain)
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = format_datetime(now)
    message["Message-ID"] = message_id
    message["List-Unsubscribe"] = f"<{unsubscribe_url}>"
    message["List-Unsubscribe-Post"] = ONE_CLICK
    message.set_content(text, subtype="plain", charset="utf-8")
    return message


def as_sent(message: EmailMessage) -> bytes:
    """The bytes an SMTP server receives for ``message`` (smtplib flattens it with CRLF line ends)."""
    return message.as_bytes(policy=message.policy.clone(linesep="\r\n"))


@dataclass
class SmtpConnection:
    """One SMTP session for a whole run, opened on first use and opened again after an error."""

    host: str
    port: int
    _smtp: smtplib.SMTP | None = field(default=None, init=False)

    async def deliver(self, message: EmailMessage) -> MailStatus:
        await asyncio.to_thread(self._send, message)
        return MailStatus.SENT

    def _send(self, message: EmailMessage) -> None:
        if self._smtp is None:
            self._smtp = smtplib.SMTP(self.host, self.port, timeout=SMTP_TIMEOUT_SECONDS)
        try:
            self._smtp.send_message(message)
        except smtplib.SMTPRecipientsRefused as refused:
            self._drop()
            if all(code >= 500 for code, _ in refused.recipients.values()):
                raise MailRejected("recipient refused") from None
            raise
        except smtplib.SMTPResponseException as answered:
            self._drop()
            if answered.smtp_code >= 500:
                raise MailRejected(f"refused with {answered.smtp_code}") from None
            raise
        except Exception:
            self._drop()
            raise

    def _drop(self) -> None:
        smtp, self._smtp = self._smtp, None
        if smtp is not None:
            with contextlib.suppress(Exception):  # a broken session is dropped whatever it answers
                smtp.close()

    async def close(self) -> None:
        smtp, self._smtp = self._smtp, None
        if smtp is not None:
            await asyncio.to_thread(_quit, smtp)


def _quit(smtp: smtplib.SMTP) -> None:
    try:
        smtp.quit()
    except Exception:  # the server went away: nothing to say goodbye to
        smtp.close()


@dataclass
class Passing:
    """A mailer without a connection of its own (the outbox's files)."""

    mailer: Mailer

    async def deliver(self, message: EmailMessage) -> MailStatus:
        return await self.mailer.deliver(message)

    async def close(self) -> None:
        return None
