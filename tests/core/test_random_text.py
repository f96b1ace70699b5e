"""Random text: one draw below ``len(alphabet) ** length`` written in that base, least significant
character first, so every text of the length is reachable and equally likely."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

import pytest

from loyalty_core.events.recording import new_event_id
from loyalty_core.random_text import ALNUM, UPPER_ALNUM, random_text
from loyalty_core.redemptions.codes import new_code


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
    assert set(code[5:]) <= set(UPPER_ALNUM)
    assert len({random_text(ALNUM, 24) for _ in range(1000)}) == 1000
