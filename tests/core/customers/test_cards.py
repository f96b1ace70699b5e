"""Loyalty card codes and identifier values, as pure rules (CUSTOMER-2, CUSTOMER-5, CUSTOMER-6)."""

from __future__ import annotations

import re

import pytest

from loyalty_core.customers.rules import cards


def test_new_codes_are_eight_characters_a_to_z_and_0_to_9() -> None:
    """Limits: loyalty card code, 8 characters, A-Z and 0-9."""
    codes = cards.new_codes(2000)
    assert all(re.fullmatch(r"[A-Z0-9]{8}", c) for c in codes)


def test_new_codes_use_the_whole_alphabet_and_do_not_repeat() -> None:
    """Issued codes are random and unguessable: every symbol appears, no code repeats in a large draw."""
    codes = cards.new_codes(5000)
    assert len(set(codes)) == 5000
    assert set("".join(codes)) == set(cards.ALPHABET)


@pytest.mark.parametrize(("raw", "normal"), [("abcd1234", "ABCD1234"), ("  AbCd1234 ", "ABCD1234")])
def test_codes_normalise_to_upper_case(raw: str, normal: str) -> None:
    """CUSTOMER-2: lookup is case-insensitive, so a typed code matches the printed one."""
    assert cards.normalise_code(raw) == normal
    assert cards.is_code(raw)


@pytest.mark.parametrize("raw", ["ABC1234", "ABCD12345", "ABCD-123", "ABCD123Ä", "abcdefß", ""])
def test_malformed_codes_are_not_codes(raw: str) -> None:
    assert not cards.is_code(raw)


def test_values_normalise_by_type() -> None:
    """Cards upper case, emails lower case, retired values as imported (trimmed)."""
    assert cards.normalise_value("loyalty_card", "abcd1234") == "ABCD1234"
    assert cards.normalise_value("email", " Ann@Example.NL ") == "ann@example.nl"
    assert cards.normalise_value("barcode", "Ab-123") == "Ab-123"


def test_accepted_types_pass_and_retired_types_are_refused_naming_the_accepted() -> None:
    """CUSTOMER-6: identifiers[].type accepts exactly email and loyalty_card; the message names them."""
    assert cards.type_problem("email") is None
    assert cards.type_problem("loyalty_card") is None
    assert cards.type_problem("barcode") == (
        "The identifier type barcode is retired and cannot be created; the accepted types are email, loyalty_card."
    )
    assert cards.type_problem("phone") == "The identifier type must be one of: email, loyalty_card."


def test_the_import_accepts_retired_types() -> None:
    """CUSTOMER-6: the attested import may carry values of the retired types."""
    for retired in cards.RETIRED_TYPES:
        assert cards.type_problem(retired, retired_allowed=True) is None
    assert cards.type_problem("phone", retired_allowed=True) == (
        "The identifier type must be one of: email, loyalty_card, barcode, qr_code, card_number."
    )
