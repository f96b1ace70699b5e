"""The portal's account mails (an invitation, a password-reset link, the notice to an address that
belongs to another shop's account): plain text, sent at once through the service's mailer, over
SMTP or as an ``.eml`` file in the outbox folder as card mails are. Each has a Message-ID of its own;
a mail that fails is not retried, since asking again sends a new link (docs/decisions.md)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from loyalty_api.adapters.mail_sender import Mailer

AccountMailer = Callable[[str, str, str], Awaitable[None]]


def account_mailer(mailer: Mailer, sender: str, domain: str) -> AccountMailer:
    """Sends ``(to, subject, text)`` from ``sender``; the subject is kept to one line."""

    async def send(to: str, subject: str, text: str) -> None:
        message = EmailMessage()
        message["From"] = sender
        message["To"] = to
        message["Subject"] = " ".join(subject.split())
        message["Date"] = formatdate(usegmt=True)
        message["Message-ID"] = make_msgid(domain=domain)
        message.set_content(text)
        await mailer.deliver(message)

    return send
