"""Errors of the shop's users, each named for its code."""

from __future__ import annotations

from loyalty_core.errors import Conflict, NotFound


class UserNotFound(NotFound):
    code = "USER_NOT_FOUND"


class UserEmailDuplicate(Conflict):
    code = "USER_EMAIL_DUPLICATE"


class LinkNotUsable(NotFound):
    """An invitation or password-reset link that is unknown, used already or past its end: one answer
    for all three, so the page tells nothing about links it did not send."""

    code = "NOT_FOUND"
