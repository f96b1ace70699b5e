"""Where a campaign-mails run hands its messages (MAIL-16): one SMTP session for the whole run, or the
service's mailer (the outbox's files) without SMTP. Either takes a batch and answers one outcome per
message, in order.

The SMTP session gets a whole batch in one hop to its thread: a hop per message (a thread-pool
submit and a wake-up of the event loop each) cost the sender more CPU than talking SMTP did.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import smtplib
from collections.abc import Sequence
from dataclasses import dataclass, field

from loyalty_api.adapters.campaign_message import Letter
from loyalty_api.adapters.mail_sender import SMTP_TIMEOUT_SECONDS, Mailer, MailRejected


class Delivery(enum.Enum):
    SENT = "sent"
    REFUSED = "refused"
    """Refused for good (a 5xx answer, or a message no header can carry): trying again would not help."""
    LATER = "later"
    """Not taken this time: tried again with back-off."""


@dataclass(frozen=True, slots=True)
class Handed:
    delivery: Delivery
    reason: str = ""
    """The server's answer or the error's kind, for the log."""


@dataclass
class SmtpConnection:
    """One SMTP session for a whole run, opened on first use and opened again after an error."""

    host: str
    port: int
    _smtp: smtplib.SMTP | None = field(default=None, init=False)

    async def deliver_all(self, letters: Sequence[Letter]) -> list[Handed]:
        return await asyncio.to_thread(self._send_all, letters)

    def _send_all(self, letters: Sequence[Letter]) -> list[Handed]:
        handed: list[Handed] = []
        for letter in letters:
            if self._smtp is None:
                try:
                    self._smtp = smtplib.SMTP(self.host, self.port, timeout=SMTP_TIMEOUT_SECONDS)
                except Exception as unreachable:
                    # no session to be had: the batch's rest waits for its back-off rather than a
                    # connect (and up to its timeout) each
                    left = len(letters) - len(handed)
                    return [*handed, *[Handed(Delivery.LATER, type(unreachable).__name__)] * left]
            handed.append(self._send(self._smtp, letter))
        return handed

    def _send(self, smtp: smtplib.SMTP, letter: Letter) -> Handed:
        try:
            if isinstance(letter.data, bytes):
                smtp.sendmail(letter.sender, [letter.to], letter.data)
            else:
                smtp.send_message(letter.data)
        except smtplib.SMTPRecipientsRefused as refused:
            self._drop()
            codes = sorted(code for code, _ in refused.recipients.values())
            return Handed(
                Delivery.REFUSED if all(code >= 500 for code in codes) else Delivery.LATER, f"recipient {codes}"
            )
        except smtplib.SMTPResponseException as answered:
            self._drop()
            return Handed(
                Delivery.REFUSED if answered.smtp_code >= 500 else Delivery.LATER, f"answered {answered.smtp_code}"
            )
        except (ValueError, TypeError) as unbuildable:  # an address no header can carry: retrying will not help
            self._drop()
            return Handed(Delivery.REFUSED, type(unbuildable).__name__)
        except Exception as failed:
            self._drop()
            return Handed(Delivery.LATER, type(failed).__name__)
        return Handed(Delivery.SENT)

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
    """A mailer without a connection of its own (the outbox's files), given each message built by
    the ``email`` package."""

    mailer: Mailer

    async def deliver_all(self, letters: Sequence[Letter]) -> list[Handed]:
        return [await self._deliver(letter) for letter in letters]

    async def _deliver(self, letter: Letter) -> Handed:
        if isinstance(letter.data, bytes):
            raise TypeError("the outbox's mailer takes a composed message")
        try:
            await self.mailer.deliver(letter.data)
        except MailRejected as rejected:
            return Handed(Delivery.REFUSED, str(rejected))
        except (ValueError, TypeError) as unbuildable:
            return Handed(Delivery.REFUSED, type(unbuildable).__name__)
        except Exception as failed:
            return Handed(Delivery.LATER, type(failed).__name__)
        return Handed(Delivery.SENT)

    async def close(self) -> None:
        return None
