"""Request and response shapes of the passes area."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, UnsetType

from loyalty_core import bounds
from loyalty_core.text import MAX_EMAIL_LENGTH
from loyalty_http.wire.pagination import DEFAULT_PER_PAGE, PerPage
from loyalty_http.wire.validation import SingleLine

Platform = Literal["platform_a", "platform_b"]


class WalletPassQuery(msgspec.Struct, forbid_unknown_fields=False):
    platform: Platform


class SaveUrl(msgspec.Struct):
    save_url: str


class IdentityScript(msgspec.Struct, forbid_unknown_fields=True):
    outcome: Literal["busy", "refused", "issued"]


class IdentityState(msgspec.Struct):
    vendor_id: int
    state: str
    retry_after: int | None = None


class RetryAccepted(msgspec.Struct):
    vendor_id: int
    state: str


HexColour = Annotated[str, bounds.COLOUR]


class BrandingBody(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    display_name: Annotated[str, bounds.DISPLAY_NAME, SingleLine] | msgspec.UnsetType | None = msgspec.UNSET
    background: HexColour | msgspec.UnsetType = msgspec.UNSET
    foreground: HexColour | msgspec.UnsetType = msgspec.UNSET
    label: HexColour | msgspec.UnsetType = msgspec.UNSET
    logo_png: bytes | msgspec.UnsetType | None = msgspec.UNSET
    """Base64 in JSON."""
    icon_png: bytes | msgspec.UnsetType | None = msgspec.UNSET


class Branding(msgspec.Struct):
    shop_name: str
    background: str
    foreground: str
    label: str
    has_logo: bool
    has_icon: bool


class SendCard(msgspec.Struct, forbid_unknown_fields=False):
    """Only ``email`` is deliverable; omitted (or empty) means ``email``."""

    channel: Literal["email"] | msgspec.UnsetType = msgspec.UNSET


class SendCardAccepted(msgspec.Struct):
    customer_id: int
    channel: str
    queued: bool


Email = Annotated[str, msgspec.Meta(max_length=MAX_EMAIL_LENGTH, extra={"rule": "email"})]


class SuppressionCreate(msgspec.Struct, forbid_unknown_fields=True):
    email: Email
    reason: Literal["bounce", "spam"]


class Suppression(msgspec.Struct):
    email: str
    reason: str
    created_at: datetime
    updated_at: datetime


Pem = Annotated[str, msgspec.Meta(min_length=1, max_length=65_536)]


class IdentityImport(msgspec.Struct, forbid_unknown_fields=True):
    """A real platform_a identity: the pass certificate, its private key and the platform's
    intermediate certificate, each as PEM text (PASS-3)."""

    certificate: Pem
    key: Pem
    intermediate: Pem


class Attachment(msgspec.Struct):
    filename: str
    content_type: str


class OutboxItem(msgspec.Struct):
    id: int
    to: str
    subject: str | None
    created_at: datetime
    status: str
    attachments: list[Attachment]


class SuppressionQuery(msgspec.Struct):
    email: Annotated[str, msgspec.Meta(max_length=255)] | UnsetType = UNSET
    per_page: PerPage = DEFAULT_PER_PAGE


class OutboxQuery(msgspec.Struct, forbid_unknown_fields=False):
    per_page: PerPage = DEFAULT_PER_PAGE
    status: Literal["delivered", "failed"] = "delivered"
    """``delivered`` (sent or written, the default) or ``failed``."""


class DeviceRegistration(msgspec.Struct, rename="camel"):
    """The body of platform_a's device registration."""

    push_token: Annotated[str, msgspec.Meta(min_length=1, max_length=255)]


class UpdatedSinceQuery(msgspec.Struct, rename="camel"):
    passes_updated_since: str | None = None
    """The ``lastUpdated`` tag of an earlier answer; anything else lists every pass."""


class UpdatedSerials(msgspec.Struct, rename="camel"):
    """platform_a's answer: the serials changed since the tag, and the tag to ask with next."""

    serial_numbers: list[str]
    last_updated: str


class DeviceLog(msgspec.Struct, rename="camel"):
    logs: list[object] = msgspec.field(default_factory=list)


class PushOutcomeScript(msgspec.Struct, forbid_unknown_fields=True):
    outcome: Literal["gone", "unavailable", "ok"]


class WalletPushAttempt(msgspec.Struct):
    """One attempt the test-mode stand-in was told of, in the order sent (section 7.5)."""

    platform: Platform
    push_token: str | None
    object_id: str | None
    serial: str | None
    sent_at: datetime
    outcome: Literal["ok", "gone", "unavailable"]


class WalletPushQuery(msgspec.Struct, forbid_unknown_fields=False):
    per_page: PerPage = DEFAULT_PER_PAGE
