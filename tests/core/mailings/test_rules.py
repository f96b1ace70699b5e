"""The pure rules of campaign mail: the fields' checks, the placeholders, the footer, the
Message-ID and the order in which a recipient is decided."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from loyalty_core.customers.models import CustomerStatus
from loyalty_core.mailings.jobs import decide
from loyalty_core.mailings.models import RecipientState
from loyalty_core.mailings.rules import (
    SAMPLE,
    Audience,
    Facts,
    audience_problems,
    body_problems,
    message_id,
    render,
    subject_problems,
    with_footer,
)


def test_the_subject_is_trimmed_bounded_and_without_control_characters() -> None:
    """MAIL-2: 1 to 200 characters once the outer spaces are trimmed; no tab, newline or other control."""
    assert subject_problems("  News  ") == []
    assert subject_problems("x" * 200) == []
    for bad in ("", "   ", "x" * 201, "a\tb", "a\nb", "a\x00b", "a\x85b"):
        assert subject_problems(bad), repr(bad)


def test_the_body_takes_only_its_four_placeholders() -> None:
    """MAIL-3: placeholders are case-sensitive; any other brace is refused."""
    assert body_problems("{first_name} {balance} {card_code} {tier}") == []
    for bad in ("", "x" * 20_001, "{First_name}", "{ first_name}", "{name}", "{", "}", "{{first_name}}"):
        assert body_problems(bad), bad


def test_placeholders_are_filled_once() -> None:
    """MAIL-5: each placeholder filled in one pass; a value holding a placeholder is not read again."""
    facts = Facts(first_name="{balance}", balance=42, card_code="C0DE", tier="")
    assert render("Hi {first_name}: {balance} on {card_code}{tier}.", facts) == "Hi {balance}: 42 on C0DE."
    assert render("{first_name} {balance} {card_code}", SAMPLE) == "Sample 100 TEST0000"


@given(st.text(alphabet=st.characters(blacklist_characters="{}"), max_size=50))
def test_text_without_braces_is_left_as_it_is(text: str) -> None:
    """MAIL-5: a body without placeholders goes as written."""
    assert render(text, SAMPLE) == text


def test_the_footer_ends_with_the_link_and_the_message_id_is_stable() -> None:
    """MAIL-10: the unsubscribe link ends the body; a Message-ID is the same for the same recipient."""
    assert with_footer("Hello\n\n", "https://x/unsubscribe/t").rstrip().endswith("https://x/unsubscribe/t")
    assert message_id(3, 7, "shop.example") == message_id(3, 7, "shop.example") == "<mailing-3-7@shop.example>"
    assert message_id(3, 7, "shop.example") != message_id(3, 8, "shop.example")


def test_the_criteria_are_bounded_and_tiers_are_keys_of_the_ladder() -> None:
    """MAIL-4: each criterion's bounds, reported on its field."""
    assert audience_problems(Audience(min_balance=0, inactive_days=3650, birthday_month=12), set()) == {}
    assert set(audience_problems(Audience(tiers=("gold",)), {"silver"})) == {"audience.tiers"}
    assert audience_problems(Audience(tiers=("gold",)), {"gold"}) == {}
    found = audience_problems(Audience(min_balance=-1, inactive_days=0, birthday_month=0), set())
    assert set(found) == {"audience.min_balance", "audience.inactive_days", "audience.birthday_month"}


def test_a_recipient_is_decided_in_the_order_of_the_checks() -> None:
    """MAIL-7: inactive, then no email, then no consent, then suppressed; else sent."""
    active = CustomerStatus.ACTIVE
    assert decide(CustomerStatus.DEACTIVATED, None, None, False, True) == RecipientState.SKIPPED_INACTIVE
    assert decide(active, 5, "a@b.c", True, False) == RecipientState.SKIPPED_INACTIVE
    assert decide(None, None, "a@b.c", True, False) == RecipientState.SKIPPED_INACTIVE
    assert decide(active, None, None, False, True) == RecipientState.SKIPPED_NO_EMAIL
    assert decide(active, None, "a@b.c", False, True) == RecipientState.SKIPPED_NO_CONSENT
    assert decide(active, None, "a@b.c", True, True) == RecipientState.SKIPPED_SUPPRESSED
    assert decide(active, None, "a@b.c", True, False) is None
