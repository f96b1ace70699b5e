"""Pure rules of campaign mail: a mailing's fields (MAIL-2, MAIL-3, MAIL-4), the body's placeholders
filled (MAIL-5), the footer with the unsubscribe link and the stable Message-ID (MAIL-10)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SUBJECT_MAX = 200
BODY_MAX = 20_000
PLACEHOLDERS = ("first_name", "balance", "card_code", "tier")
MAX_BALANCE = 2_147_483_647
MAX_INACTIVE_DAYS = 3_650
CRITERIA = ("tiers", "min_balance", "inactive_days", "birthday_month")

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")


@dataclass(frozen=True, slots=True)
class Audience:
    """The criteria, combined with and; None: not set (MAIL-4)."""

    tiers: tuple[str, ...] | None = None
    min_balance: int | None = None
    inactive_days: int | None = None
    birthday_month: int | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "tiers": list(self.tiers) if self.tiers is not None else None,
            "min_balance": self.min_balance,
            "inactive_days": self.inactive_days,
            "birthday_month": self.birthday_month,
        }

    @classmethod
    def of_json(cls, stored: Mapping[str, Any]) -> Audience:
        tiers = stored.get("tiers")
        return cls(
            tiers=tuple(tiers) if tiers is not None else None,
            min_balance=stored.get("min_balance"),
            inactive_days=stored.get("inactive_days"),
            birthday_month=stored.get("birthday_month"),
        )


def subject_problems(subject: str) -> list[str]:
    """MAIL-2: 1 to 200 characters once trimmed, no control character (tab and newline included)."""
    trimmed = subject.strip(" ")
    if not trimmed:
        return ["The subject must not be empty."]
    if len(trimmed) > SUBJECT_MAX:
        return [f"The subject must be at most {SUBJECT_MAX} characters."]
    if _CONTROL.search(trimmed):
        return ["The subject must not contain control characters (tabs and line breaks included)."]
    return []


def body_problems(body: str) -> list[str]:
    """MAIL-3: 1 to 20,000 characters; a brace is only part of a known placeholder (case-sensitive)."""
    if not body:
        return ["The body must not be empty."]
    if len(body) > BODY_MAX:
        return [f"The body must be at most {BODY_MAX} characters."]
    if "{" in _PLACEHOLDER.sub("", body) or "}" in _PLACEHOLDER.sub("", body):
        known = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
        return [f"The body may only use the placeholders {known}; any other brace is refused."]
    return []


def audience_problems(audience: Audience, known_tiers: set[str]) -> dict[str, list[str]]:
    """MAIL-4: each criterion's bounds; tiers must be keys of the current ladder."""
    problems: dict[str, list[str]] = {}
    if audience.tiers is not None:
        if not audience.tiers:
            problems["audience.tiers"] = ["Name at least one tier, or leave the criterion out."]
        else:
            unknown = [key for key in audience.tiers if key not in known_tiers]
            if unknown:
                problems["audience.tiers"] = [f"Not a tier of the current ladder: {', '.join(map(str, unknown))}."]
    if audience.min_balance is not None and not 0 <= audience.min_balance <= MAX_BALANCE:
        problems["audience.min_balance"] = [f"Must be between 0 and {MAX_BALANCE}."]
    if audience.inactive_days is not None and not 1 <= audience.inactive_days <= MAX_INACTIVE_DAYS:
        problems["audience.inactive_days"] = [f"Must be between 1 and {MAX_INACTIVE_DAYS}."]
    if audience.birthday_month is not None and not 1 <= audience.birthday_month <= 12:
        problems["audience.birthday_month"] = ["Must be between 1 and 12."]
    return problems


@dataclass(frozen=True, slots=True)
class Facts:
    """What a message's placeholders are filled with."""

    first_name: str
    balance: int
    card_code: str
    tier: str


SAMPLE = Facts(first_name="Sample", balance=100, card_code="TEST0000", tier="")
"""MAIL-11: a test copy's values, never another customer's data (``tier``: the first tier's name)."""


@dataclass(frozen=True, slots=True)
class Template:
    """A body split once into its text and its placeholders, so a mailing's thousands of messages
    only join values in (MAIL-5): ``parts`` alternate text and a placeholder's name, text first."""

    parts: tuple[str, ...]

    @classmethod
    def of(cls, body: str) -> Template:
        return cls(tuple(_PLACEHOLDER.split(body)))

    def fill(self, facts: Facts) -> str:
        """MAIL-5: each placeholder filled once, in one pass (a value holding braces is not read again)."""
        values = {
            "first_name": facts.first_name,
            "balance": str(facts.balance),
            "card_code": facts.card_code,
            "tier": facts.tier,
        }
        filled = list(self.parts)
        filled[1::2] = [values[name] for name in self.parts[1::2]]
        return "".join(filled)


def render(body: str, facts: Facts) -> str:
    """MAIL-5: ``body`` with its placeholders filled (see ``Template``)."""
    return Template.of(body).fill(facts)


def with_footer(text: str, unsubscribe_url: str) -> str:
    """MAIL-10: the unsubscribe link ends the body."""
    return f"{text.rstrip()}\n\n--\nUnsubscribe: {unsubscribe_url}\n"


def message_id(mailing_id: int, recipient_id: int, domain: str) -> str:
    """MAIL-10: unique per message and the same on every attempt of it."""
    return f"<mailing-{mailing_id}-{recipient_id}@{domain}>"
