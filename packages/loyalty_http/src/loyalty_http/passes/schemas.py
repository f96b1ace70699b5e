"""Request and response shapes of the passes area."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

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


HexColour = Annotated[str, msgspec.Meta(pattern=r"^#[0-9A-Fa-f]{6}$")]


class BrandingBody(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    display_name: Annotated[str, msgspec.Meta(min_length=1, max_length=200)] | msgspec.UnsetType | None = msgspec.UNSET
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
