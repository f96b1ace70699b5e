"""Marketing consent as pure rules (CONSENT-2 to CONSENT-4, CONSENT-6)."""

from __future__ import annotations

from datetime import date

import pytest

from loyalty_core.customers.rules import consent

KEY = b"k" * 32


@pytest.mark.parametrize(
    ("born", "today", "age"),
    [
        (date(2013, 4, 2), date(2026, 4, 1), 12),
        (date(2013, 4, 2), date(2026, 4, 2), 13),
        (date(2012, 2, 29), date(2025, 2, 28), 12),
        (date(2012, 2, 29), date(2025, 3, 1), 13),
        (date(2012, 2, 29), date(2024, 2, 29), 12),
    ],
)
def test_age_counts_whole_years(born: date, today: date, age: int) -> None:
    """CONSENT-6 counts age by date_of_birth; a 29 February birthday falls on 1 March in other years."""
    assert consent.age_on(born, today) == age


def test_under_13_is_too_young_and_no_birth_date_is_not() -> None:
    """CONSENT-6: younger than 13 by date_of_birth cannot have consent recorded; without one nothing refuses it."""
    assert consent.too_young(date(2013, 4, 3), date(2026, 4, 2))
    assert not consent.too_young(date(2013, 4, 2), date(2026, 4, 2))
    assert not consent.too_young(None, date(2026, 4, 2))


def test_import_attestation_version_format() -> None:
    """CONSENT-3: `<importer>-import-attestation:<date>`."""
    assert consent.attestation_version("shopware", date(2025, 11, 3)) == "shopware-import-attestation:2025-11-03"


@pytest.mark.parametrize(
    ("granted_now", "version_now", "granted", "version", "changes"),
    [
        (False, None, True, "v1", True),
        (True, "v1", True, "v1", False),
        (True, "v1", True, "v2", True),
        (True, "v1", False, None, True),
        (False, "v1", False, None, False),
        (False, None, False, None, False),
    ],
)
def test_only_a_change_of_the_decision_is_recorded(
    granted_now: bool, version_now: str | None, granted: bool, version: str | None, changes: bool
) -> None:
    """CONSENT-2: a grant, a grant under new wording, or a withdrawal of a grant is a new decision."""
    assert consent.changes(granted_now, version_now, granted, version) is changes


def test_unsubscribe_token_names_its_customer_and_never_expires() -> None:
    """CONSENT-4: the link is signed and never expires."""
    token = consent.unsubscribe_token(KEY, 12, 345)
    assert consent.read_unsubscribe_token(KEY, token) == (12, 345)


def test_altered_unsubscribe_tokens_are_refused() -> None:
    """CONSENT-4: signed, so neither the ids nor the signature can be changed, nor another key used."""
    token = consent.unsubscribe_token(KEY, 12, 345)
    vendor, customer, signature = token.split(".")
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    for forged in (
        f"{vendor}.346.{signature}",
        f"13.{customer}.{signature}",
        f"{vendor}.{customer}.{flipped}",
        f"{vendor}.{customer}",
        f"0{vendor}.{customer}.{signature}",
        "",
    ):
        assert consent.read_unsubscribe_token(KEY, forged) is None
    assert consent.read_unsubscribe_token(b"x" * 32, token) is None
