"""The mailings' request and response shapes (MAIL-2 to MAIL-7)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from loyalty_core.mailings.reads import MailingView
from loyalty_core.mailings.rules import Audience
from loyalty_http.wire.pagination import DEFAULT_PER_PAGE, PerPage

Email = Annotated[str, msgspec.Meta(max_length=255, extra={"rule": "email"})]


class MailingAudience(msgspec.Struct, forbid_unknown_fields=True):
    """The criteria, combined with and; a criterion left out or null is not applied."""

    tiers: list[Annotated[str, msgspec.Meta(max_length=32)]] | None = None
    min_balance: int | None = None
    inactive_days: int | None = None
    birthday_month: int | None = None

    def criteria(self) -> Audience:
        return Audience(
            tiers=tuple(self.tiers) if self.tiers is not None else None,
            min_balance=self.min_balance,
            inactive_days=self.inactive_days,
            birthday_month=self.birthday_month,
        )


class MailingCreate(msgspec.Struct, forbid_unknown_fields=True):
    subject: str
    body: str
    audience: MailingAudience = msgspec.field(default_factory=MailingAudience)


class MailingPatch(msgspec.Struct, forbid_unknown_fields=True):
    """Replaces the fields it names; ``audience`` whole."""

    subject: str | UnsetType = UNSET
    body: str | UnsetType = UNSET
    audience: MailingAudience | UnsetType = UNSET


class MailingTest(msgspec.Struct, forbid_unknown_fields=True):
    email: Email


class MailingSend(msgspec.Struct, forbid_unknown_fields=True):
    """``at``: an instant after the service's clock (scheduled); left out: sending starts now."""

    at: datetime | None = None


class MailingListQuery(msgspec.Struct):
    per_page: PerPage = DEFAULT_PER_PAGE


class MailingCounts(msgspec.Struct):
    sent: int
    failed: int
    skipped_inactive: int
    skipped_no_email: int
    skipped_no_consent: int
    skipped_suppressed: int
    pending: int


class MailingShown(msgspec.Struct):
    id: int
    subject: str
    body: str
    audience: MailingAudience
    status: str
    audience_size: int | None
    counts: MailingCounts
    created_at: datetime
    scheduled_for: datetime | None
    sent_at: datetime | None
    cancel_reason: str | None

    @classmethod
    def of(cls, view: MailingView) -> MailingShown:
        m = view.mailing
        stored = Audience.of_json(m.audience)
        return cls(
            id=m.id,
            subject=m.subject,
            body=m.body,
            audience=MailingAudience(
                tiers=list(stored.tiers) if stored.tiers is not None else None,
                min_balance=stored.min_balance,
                inactive_days=stored.inactive_days,
                birthday_month=stored.birthday_month,
            ),
            status=m.status,
            audience_size=m.audience_size,
            counts=MailingCounts(**view.counts),
            created_at=m.created_at,
            scheduled_for=m.scheduled_for,
            sent_at=m.sent_at,
            cancel_reason=m.cancel_reason,
        )


class MailingTestAccepted(msgspec.Struct):
    id: int
    email: str
