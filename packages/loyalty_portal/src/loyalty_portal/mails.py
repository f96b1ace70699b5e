"""The account mails the portal sends and how they go: after the page's transaction commits (a
response's background task runs once the answer is sent, which is after the commit), so a link
whose row rolled back is never mailed, and a page answers as fast whether or not it sent a mail."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from litestar import Response
from litestar.background_tasks import BackgroundTask

from loyalty_core.staff.services.links import INVITATION_LIFETIME, RESET_LIFETIME, Invited, ResetAsked
from loyalty_portal.config import PortalConfig
from loyalty_portal.web import MOUNT_PATH, log

R = TypeVar("R", bound=Response[Any])


@dataclass(frozen=True, slots=True)
class Mail:
    to: str
    subject: str
    text: str


def _hours(lifetime: timedelta) -> int:
    return int(lifetime.total_seconds() // 3600)


def invitation_mail(invited: Invited, config: PortalConfig) -> Mail:
    """The link to set a password, or, for an address that signs in at another shop, a notice that
    names no other shop and holds no link (STAFF-4)."""
    if invited.token is None:
        return Mail(
            invited.email,
            f"An invitation to {invited.shop}'s loyalty portal",
            f"{invited.shop} tried to add {invited.email} to its loyalty portal. This address already "
            "signs in to the loyalty portal of another shop, and one address belongs to one account, so "
            "nothing was changed.\n\nIf you are to work for both shops, ask them to invite another "
            "address of yours. If you did not expect this, you can ignore this mail.\n",
        )
    link = f"{config.public_url}{MOUNT_PATH}/welcome/{invited.token}"
    return Mail(
        invited.email,
        f"You are invited to {invited.shop}'s loyalty portal",
        f"{invited.shop} invites you to its loyalty portal as {invited.role}.\n\n"
        f"Choose your password here within {_hours(INVITATION_LIFETIME)} hours (the link works once):\n"
        f"{link}\n\nIf you did not expect this, you can ignore this mail.\n",
    )


def reset_mail(asked: ResetAsked, config: PortalConfig) -> Mail:
    link = f"{config.public_url}{MOUNT_PATH}/reset/{asked.token}"
    return Mail(
        asked.email,
        "Reset your loyalty portal password",
        "Someone asked to reset the password of this address's loyalty portal account.\n\n"
        f"Choose a new password here within {_hours(RESET_LIFETIME)} hours (the link works once; "
        f"using it signs you out everywhere):\n{link}\n\n"
        "If you did not ask for this, ignore this mail: your password stays as it is.\n",
    )


def after_the_answer(response: R, config: PortalConfig, mails: list[Mail]) -> R:
    """``response`` with ``mails`` sent once it has gone (so after the page's commit)."""
    if mails:
        response.background = BackgroundTask(_send, config, mails)
    return response


async def _send(config: PortalConfig, mails: list[Mail]) -> None:
    for mail in mails:
        if config.send_mail is None:
            log.warning("account mail not sent: the portal has no mailer")
            continue
        try:
            await config.send_mail(mail.to, mail.subject, mail.text)
        except Exception as exc:  # the person asks again (a new link); the page has answered already
            log.warning("account mail not sent", error=type(exc).__name__)
