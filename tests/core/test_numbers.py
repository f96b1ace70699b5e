"""How a number typed as text is read, the one rule the API's validator and the portal's forms share."""

from __future__ import annotations

import msgspec
import pytest

from loyalty_core.numbers import (
    INT32_MAX,
    INT32_MIN,
    cents_of,
    euro_amount,
    euros,
    is_number,
    row_id_of,
    whole_of,
    whole_range,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("7", 7), ("+7", 7), ("-7", -7), ("007", 7), ("-0", 0), (str(INT32_MAX), INT32_MAX), (str(INT32_MIN), INT32_MIN)],
)
def test_whole_numbers_take_a_sign_and_leading_zeros(text: str, expected: int) -> None:
    """INPUT-10: a numeric string counts as the number it spells."""
    assert whole_of(text) == expected


@pytest.mark.parametrize("text", ["", "1.5", "1e3", "--5", "+-5", "5-", " 5", "١٢", "²", "1_000", "five"])
def test_anything_but_ascii_digits_and_one_sign_is_no_whole_number(text: str) -> None:
    """INPUT-10: digits of other scripts, separators and fractions are not whole numbers."""
    assert whole_of(text) is None


def test_a_digit_string_too_long_for_any_range_is_out_of_range_on_its_side() -> None:
    """INPUT-10: a number of thousands of digits is refused by the range check, never converted."""
    low, high = whole_range(None)
    assert (whole_of("9" * 5000) or 0) > high
    assert (whole_of("-" + "9" * 5000) or 0) < low
    assert whole_of("0" * 5000 + "12") == 12


def test_a_fields_bounds_narrow_the_32_bit_range() -> None:
    """INPUT-10: integers are 32-bit unless the field's bounds say otherwise."""
    assert whole_range(None) == (INT32_MIN, INT32_MAX)
    assert whole_range(msgspec.Meta(ge=1)) == (1, INT32_MAX)
    assert whole_range(msgspec.Meta(gt=0, lt=10_001)) == (1, 10_000)
    assert whole_range(msgspec.Meta(ge=-(2**40), le=2**40)) == (INT32_MIN, INT32_MAX)


@pytest.mark.parametrize(("text", "expected"), [("1.5", True), (".5", True), ("2e-3", True), ("-4", True)])
def test_decimal_numbers(text: str, expected: bool) -> None:
    """INPUT-10: a decimal number is digits with an optional point, sign and exponent."""
    assert is_number(text) is expected


@pytest.mark.parametrize("text", ["inf", "nan", "Infinity", "1_000.5", "1.2.3", "", "."])
def test_no_infinity_or_separators_in_decimal_numbers(text: str) -> None:
    """INPUT-10: infinite or NaN is no number."""
    assert is_number(text) is False


@pytest.mark.parametrize(("text", "expected"), [("1", 1), ("123456789012345678", 123456789012345678)])
def test_row_ids_are_digits_without_a_leading_zero(text: str, expected: int) -> None:
    """INPUT-13: a numeric path id is a whole number of ASCII digits."""
    assert row_id_of(text) == expected


@pytest.mark.parametrize("text", ["0", "01", "-1", "+1", "1234567890123456789", "²", "1 ", "", "1/"])
def test_anything_else_names_no_row(text: str) -> None:
    """INPUT-13: a path id that is not a whole number names no row (the route's not-found)."""
    assert row_id_of(text) is None


@pytest.mark.parametrize(
    ("text", "cents"),
    [("12", 1200), ("12.5", 1250), ("12.50", 1250), ("12,50", 1250), ("0.05", 5), ("0", 0), ("007.10", 710)],
)
def test_an_amount_in_euros_is_read_as_cents(text: str, cents: int) -> None:
    """PORTAL-17: a point or a comma, at most two decimals, stored in cents."""
    assert cents_of(text) == cents


@pytest.mark.parametrize(
    "text", ["", "12.505", "12.", ".5", "-1", "+1", "1,000.00", "1 000", "€12", "١٢", "1e3", "12.5x"]
)
def test_an_amount_with_more_decimals_a_sign_or_other_digits_is_no_amount(text: str) -> None:
    """PORTAL-17: more than two decimals, signs, separators, currency signs and digits of other scripts
    are refused, never rounded."""
    assert cents_of(text) is None


@pytest.mark.parametrize(
    ("cents", "shown", "typed"), [(1250, "€12.50", "12.50"), (5, "€0.05", "0.05"), (-305, "-€3.05", "-3.05")]
)
def test_cents_are_shown_in_euros_with_two_decimals(cents: int, shown: str, typed: str) -> None:
    """PORTAL-17: one helper shows money, one fills a form field; a shown amount reads back the same."""
    assert (euros(cents), euro_amount(cents)) == (shown, typed)
    if cents >= 0:
        assert cents_of(euro_amount(cents)) == cents
