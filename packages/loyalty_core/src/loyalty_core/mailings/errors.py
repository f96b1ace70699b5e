"""Campaign-mail errors, each named for its code (MAIL-12)."""

from __future__ import annotations

from loyalty_core.errors import Conflict, NotFound


class MailingNotFound(NotFound):
    """Unknown, non-numeric or another vendor's mailing."""

    code = "MAILING_NOT_FOUND"


class MailingNotDraft(Conflict):
    """An edit or a send of a mailing that is no longer a draft."""

    code = "MAILING_NOT_DRAFT"


class MailingNotActive(Conflict):
    """A cancel of a mailing that is neither scheduled nor sending."""

    code = "MAILING_NOT_ACTIVE"
