"""A campaign message as it goes out (MAIL-10): plain text in UTF-8 from the service's address with
the shop's name, its stable Message-ID, the RFC 8058 unsubscribe headers, and the link at the end
of the body.

``compose`` builds one with the standard library's ``email`` package; ``Letterhead`` builds the same
bytes for a whole mailing from parts folded once (its From, its Subject, the MIME headers), filling
in per message only what differs, because the package's header machinery was a fifth of the sender's
CPU. Where a message holds something the shortcut does not reproduce byte for byte (an address
outside plain ASCII, a From setting with a display name), ``compose`` builds it.
"""

from __future__ import annotations

import binascii
import re
from dataclasses import dataclass
from datetime import datetime
from email import policy, quoprimime
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime

ONE_CLICK = "List-Unsubscribe=One-Click"

_POLICY = policy.default.clone(refold_source="none")
"""The package's default, except that a header stored raw is written as stored: the unsubscribe
link, longer than a 78-character line, is otherwise folded into encoded words that no mail client
reads as the ``<URL>`` RFC 2369 and RFC 8058 ask for."""
_SENT = _POLICY.clone(linesep="\r\n")
_CRLF = b"\r\n"
_MAX_LINE = int(_POLICY.max_line_length or 78)
_PLAIN_ADDRESS = re.compile(r"[A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*")
_PLAIN_MESSAGE_ID = re.compile(r"<[A-Za-z0-9.-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*>")
_PLAIN_URL = re.compile(r"[!-;=?-~]+")
"""Printable ASCII without spaces or angle brackets: stored in the header as it is."""


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
    message = EmailMessage(policy=_POLICY)
    local, _, domain = sender.partition("@")
    message["From"] = Address(display_name=shop_name, username=local, domain=domain)
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = format_datetime(now)
    message["Message-ID"] = message_id
    message.set_raw("List-Unsubscribe", f"<{unsubscribe_url}>")
    message["List-Unsubscribe-Post"] = ONE_CLICK
    message.set_content(text, subtype="plain", charset="utf-8")
    return message


def as_sent(message: EmailMessage) -> bytes:
    """The bytes an SMTP server receives for ``message`` (smtplib flattens it with CRLF line ends)."""
    return message.as_bytes(policy=message.policy.clone(linesep="\r\n"))


@dataclass(frozen=True, slots=True)
class Letter:
    """A message ready for the SMTP session: ``data`` the bytes as sent from ``sender`` to ``to``, or
    the ``EmailMessage`` where the shortcut did not build it (smtplib flattens that one)."""

    sender: str
    to: str
    data: bytes | EmailMessage

    def as_sent(self) -> bytes:
        return self.data if isinstance(self.data, bytes) else as_sent(self.data)


class Letterhead:
    """One mailing's messages: what every message shares is folded once; ``letter`` fills in the
    rest. The bytes equal ``as_sent(compose(...))`` (a test holds the two equal)."""

    def __init__(self, *, shop_name: str, sender: str, subject: str, shortcut: bool = True) -> None:
        self._shop_name, self._sender, self._subject = shop_name, sender, subject
        self._shortcut = shortcut and _PLAIN_ADDRESS.fullmatch(sender) is not None
        local, _, domain = sender.partition("@")
        head = EmailMessage(policy=_POLICY)
        head["From"] = Address(display_name=shop_name, username=local, domain=domain)
        head["Subject"] = subject
        self._from_line = _SENT.fold_binary("From", head["From"])
        self._subject_line = _SENT.fold_binary("Subject", head["Subject"])
        tail = b"List-Unsubscribe-Post: " + ONE_CLICK.encode() + _CRLF + b'Content-Type: text/plain; charset="utf-8"'
        self._tails = {
            encoding: tail + b"\r\nContent-Transfer-Encoding: " + encoding.encode() + b"\r\nMIME-Version: 1.0\r\n\r\n"
            for encoding in ("7bit", "8bit", "quoted-printable", "base64")
        }
        self._dated: tuple[datetime, bytes] | None = None

    def letter(self, *, to: str, text: str, message_id: str, unsubscribe_url: str, now: datetime) -> Letter:
        """The message to ``to``; ``ValueError`` or ``TypeError`` when no header can carry a value."""
        built = self._shortcut_bytes(to, text, message_id, unsubscribe_url, now) if self._shortcut else None
        if built is not None:
            return Letter(self._sender, to, built)
        message = compose(
            shop_name=self._shop_name,
            sender=self._sender,
            to=to,
            subject=self._subject,
            text=text,
            message_id=message_id,
            unsubscribe_url=unsubscribe_url,
            now=now,
        )
        return Letter(self._sender, to, message)

    def _shortcut_bytes(self, to: str, text: str, message_id: str, unsubscribe_url: str, now: datetime) -> bytes | None:
        if not (
            _PLAIN_ADDRESS.fullmatch(to)
            and _PLAIN_MESSAGE_ID.fullmatch(message_id)
            and _PLAIN_URL.fullmatch(unsubscribe_url)
        ):
            return None
        encoding, body = _encoded(text)
        return b"".join(
            (
                self._from_line,
                b"To: ",
                to.encode(),
                _CRLF,
                self._subject_line,
                self._date_line(now),
                b"Message-ID: ",
                message_id.encode(),
                _CRLF,
                b"List-Unsubscribe: <",
                unsubscribe_url.encode(),
                b">\r\n",
                self._tails[encoding],
                body,
            )
        )

    def _date_line(self, now: datetime) -> bytes:
        if self._dated is None or self._dated[0] != now:
            self._dated = (now, _SENT.fold_binary("Date", _SENT.header_factory("Date", format_datetime(now))))
        return self._dated[1]


def _encoded(text: str) -> tuple[str, bytes]:
    """The body's transfer encoding and its bytes as sent, chosen as ``EmailMessage.set_content``
    chooses them for UTF-8 text under the default policy: lines of at most 78 bytes go as they are
    (7bit, or 8bit beyond ASCII), else quoted-printable or base64, whichever is shorter over the
    first ten lines."""
    lines = text.encode().splitlines()  # what the package splits on too: CR, LF and CRLF
    whole = b"\n".join(lines) + b"\n"
    if max((len(line) for line in lines), default=0) <= _MAX_LINE:
        return ("7bit" if whole.isascii() else "8bit"), _sent_lines(whole)
    sniff = b"\n".join(lines[:10]) + b"\n"
    sniff_qp = quoprimime.body_encode(sniff.decode("latin-1"), _MAX_LINE)
    if len(sniff_qp) > len(binascii.b2a_base64(sniff)):
        step = _MAX_LINE // 4 * 3
        return "base64", _sent_lines(
            b"".join(binascii.b2a_base64(whole[i : i + step]) for i in range(0, len(whole), step))
        )
    if len(lines) > 10:
        sniff_qp = quoprimime.body_encode(whole.decode("latin-1"), _MAX_LINE)
    return "quoted-printable", _sent_lines(sniff_qp.encode("ascii"))


_LINE_END = re.compile(rb"\r\n|\r|\n")


def _sent_lines(payload: bytes) -> bytes:
    """``payload`` with the line ends an SMTP server receives."""
    return _CRLF.join(_LINE_END.split(payload))
