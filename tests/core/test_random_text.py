"""Random text: one draw below ``len(alphabet) ** length`` written in that base, least significant
character first, so every text of the length is reachable and equally likely."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

import pytest

from loyalty_core.customers.rules import cards
from loyalty_core.events.services.recording import new_event_id
from loyalty_core.random_text import ALNUM, LOOK_ALIKES, READABLE, READABLE_LETTERS, random_text
from loyalty_core.redemptions.rules import new_code
from loyalty_core.tenancy.rules.prefixes import prefix_for
from loyalty_core.vouchers.services import new_code as new_voucher_code


@pytest.mark.parametrize(
    ("drawn", "expected"),
    [(0, "AAAA"), (1, "BAAA"), (26, "ABAA"), (26**4 - 1, "ZZZZ"), (3 * 26**3 + 2, "CAAD")],
)
def test_the_draw_is_written_in_the_alphabets_base(monkeypatch: pytest.MonkeyPatch, drawn: int, expected: str) -> None:
    bounds: list[int] = []

    def randbelow(bound: int) -> int:
        bounds.append(bound)
        return drawn

    monkeypatch.setattr(secrets, "randbelow", randbelow)
    assert random_text("ABCDEFGHIJKLMNOPQRSTUVWXYZ", 4) == expected
    assert bounds == [26**4]  # one draw covering every text of the length


def test_ids_and_codes_keep_their_shapes() -> None:
    event_id = new_event_id(datetime(2026, 1, 1, tzinfo=UTC))
    assert (event_id[:4], len(event_id)) == ("evt_", 28)
    assert set(event_id[4:]) <= set(ALNUM)
    code = new_code("ABCD")
    assert (code[:5], len(code)) == ("ABCD-", 13)
    assert set(code[5:]) <= set(READABLE)
    assert len({random_text(ALNUM, 24) for _ in range(1000)}) == 1000


def test_the_readable_alphabet_is_a_to_z_and_0_to_9_without_look_alikes() -> None:
    """CUSTOMER-5, REDEEM-2: codes people type hold no ``0 O 1 I L``, and are still A-Z 0-9."""
    assert set("0O1IL") == LOOK_ALIKES
    assert set(READABLE) == set("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") - LOOK_ALIKES
    assert set(READABLE_LETTERS) == set(READABLE) - set("23456789")


def test_every_code_a_person_types_is_drawn_without_look_alikes() -> None:
    """CUSTOMER-5, REDEEM-2, VOUCHER-1: card codes, confirmation codes, voucher codes and random
    prefixes: a cashier cannot misread a code the service issued."""
    drawn = "".join(cards.new_codes(3000))
    drawn += "".join(new_code("ABCD")[5:] for _ in range(1000))
    drawn += "".join(new_voucher_code()[4:] for _ in range(1000))
    drawn += "".join(prefix_for("") for _ in range(1000))
    assert set(drawn) == set(READABLE)


@pytest.mark.parametrize(("name", "prefix"), [("Bakery Jansen", "BAKE"), ("Lotus Oil Co", "TUSC"), ("Oil", None)])
def test_a_prefix_takes_the_names_readable_letters(name: str, prefix: str | None) -> None:
    """REDEEM-2: the prefix is the name's first four letters that are not look-alikes; a name with
    fewer gives four random readable letters."""
    made = prefix_for(name)
    assert len(made) == 4
    assert set(made) <= set(READABLE_LETTERS)
    if prefix is not None:
        assert made == prefix
