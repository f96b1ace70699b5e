"""The bounds of the input fields that both apps over core take: each is declared once here, as the
``msgspec.Meta`` the API's request structs annotate a field with (``Annotated[int, POSITIVE]``), and
the portal's forms and templates read the same declaration (``form.whole("point_cost", POSITIVE)``,
``maxlength``), so a form refuses exactly what the API refuses. Integers without a bound of their
own are signed 32-bit (``loyalty_core.numbers``). Rules that need more than a field's own value
(EARN-13's bounds of earn rules and campaigns, a plan's ceilings) are the services' and live there."""

from __future__ import annotations

from typing import Final

from msgspec import Meta

from loyalty_core.numbers import INT32_MAX
from loyalty_core.text import MAX_EMAIL_LENGTH

# whole numbers (INPUT-10)
COUNT: Final = Meta(ge=0, le=INT32_MAX)
"""A stock or an amount that may be zero."""
POSITIVE: Final = Meta(ge=1, le=INT32_MAX)
"""A reward's point cost or discount, a per-customer limit."""

# the liability report (LIABILITY-5)
POINT_VALUE: Final = Meta(ge=0, le=1_000_000)
"""A vendor's ``point_value_millicents``: what one point is worth, in thousandths of a cent."""

# rewards
REWARD_NAME: Final = Meta(min_length=1, max_length=255)
REWARD_DESCRIPTION: Final = Meta(max_length=65535)

# pending points (PENDING-1)
PENDING_DAYS: Final = Meta(ge=0, le=90)
"""Days a purchase's points wait before they are spendable; 0: at once."""

# wallet adjustments
ADJUST_REASON: Final = Meta(max_length=500)
ADJUST_KEY: Final = Meta(max_length=255)
CANCEL_NOTE: Final = Meta(max_length=400)
"""Why a redemption is cancelled, after ``redemption_cancelled: `` in the entry's 500-character reason."""

# customers
STATEMENT_VERSION: Final = Meta(max_length=255)
"""The marketing-consent statement a customer agreed to (CONSENT-2)."""
CUSTOMER_NAME: Final = Meta(max_length=255)
"""A customer's first or last name."""
CUSTOMER_EMAIL: Final = Meta(max_length=MAX_EMAIL_LENGTH)
"""A customer's email, which must also read as an email address (``loyalty_core.text.is_email``)."""
CUSTOMER_PHONE: Final = Meta(max_length=50)
EXTERNAL_ID: Final = Meta(max_length=255)
"""The shop's own id of a customer."""
CUSTOMER_SEARCH: Final = Meta(max_length=255)
"""What a back-office search for customers matches (a card code, an email, a part of a name)."""
MAX_BATCH: Final = 10_000
"""The most cards one batch holds (BATCH-1)."""
CARD_BATCH_COUNT: Final = Meta(ge=1, le=MAX_BATCH)

# purchases (the till's, and the portal's example basket)
ITEM_QUANTITY: Final = Meta(ge=1)
ITEM_TEXT: Final = Meta(max_length=255)
"""A purchase line's ``sku``, ``category``; a purchase's ``external_reference``."""
TOTAL_AMOUNT: Final = Meta(ge=1)

# tenancy: plans, shops, branches, API clients
ADMIN_NAME: Final = Meta(max_length=200)
"""The name of a plan, a shop, a branch or an API client."""
BRANCH_KEY: Final = Meta(max_length=64)
"""A branch's ``external_id``, the key a till names its branch by."""
BRANCH_TYPE: Final = Meta(max_length=32)

# portal users
USER_EMAIL: Final = Meta(min_length=3, max_length=MAX_EMAIL_LENGTH, pattern=r"^[^@\s]+@[^@\s]+$")
PASSWORD: Final = Meta(max_length=1024)
"""Bounded above so a huge body cannot make the hasher work for long; the lower bound is a rule of
the service (``staff.services.users``), so its message names the field as every rule's does."""

# branding of the shop's passes
DISPLAY_NAME: Final = Meta(min_length=1, max_length=200)
COLOUR: Final = Meta(pattern=r"^#[0-9A-Fa-f]{6}$")

# tiers (TIER-1)
TIER_KEY: Final = Meta(pattern=r"^[a-z0-9_-]{1,32}$")
TIER_NAME: Final = Meta(min_length=1, max_length=64)
TIER_THRESHOLD: Final = Meta(ge=0, le=INT32_MAX)
TIER_MULTIPLIER: Final = Meta(ge=100, le=1000)
TIER_DESCRIPTION: Final = Meta(max_length=1000)
TIER_PERIOD: Final = Meta(ge=1, le=36)
TIER_GRACE: Final = Meta(ge=0, le=36)

# referrals (REFERRAL-2)
REFERRAL_POINTS: Final = Meta(ge=0, le=1_000_000)
"""What a completed referral pays the referrer, or the referee."""
REFERRAL_MIN_PURCHASE: Final = Meta(ge=0, le=INT32_MAX)
"""The cents a referee's purchase must reach to complete the referral."""
REFERRAL_CAP: Final = Meta(ge=0, le=INT32_MAX)
"""Paid completions per referrer; 0: unlimited."""
