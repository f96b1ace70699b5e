"""The catalogue's pure rules: phone-book folding and search patterns (CATALOGUE-5), the
batch's first occurrence (CATALOGUE-8) and the metadata limit (CATALOGUE-6)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from loyalty_core.catalogue.rules.batch import later_duplicates
from loyalty_core.catalogue.rules.metadata import MAX_METADATA_BYTES, compact_json, fits
from loyalty_core.catalogue.rules.sorting import NAME_SORT_MAX, contains_pattern, fold, sort_key


def test_case_and_accents_do_not_move_a_name() -> None:
    """CATALOGUE-5: ordered like a phone book, case and accents do not move a name."""
    assert fold("Éclair") == fold("eclair") == fold("Eclair") == fold("ÉCLAIR") == "eclair"
    names = ["ecrou", "Éclair", "Zèbre", "eclair", "apple", "Äpfel", "Eclair", "zebra"]
    assert sorted(names, key=sort_key) == ["Äpfel", "apple", "Éclair", "eclair", "Eclair", "ecrou", "zebra", "Zèbre"]


def test_ligatures_sharp_s_and_dotted_capital_i_fold_to_plain_letters() -> None:
    assert fold("ﬁle") == "file"
    assert fold("Straße") == "strasse"
    assert fold("İstanbul") == "istanbul"
    assert fold("ℌotel") == "hotel"


@given(st.text())
def test_folding_is_idempotent(name: str) -> None:
    """A folded search term matches the folded names it was folded like."""
    assert fold(fold(name)) == fold(name)


@given(st.text(max_size=255))
def test_sort_key_fits_a_btree_entry(name: str) -> None:
    key = sort_key(name)
    assert len(key) <= NAME_SORT_MAX
    assert len(key.encode()) <= 4 * NAME_SORT_MAX < 2704 - 255 * 4


def test_search_pattern_escapes_like_wildcards() -> None:
    """``search`` is a substring: ``%``, ``_`` and ``\\`` in the term match themselves."""
    assert contains_pattern("Crème") == "%creme%"
    assert contains_pattern("50%_off\\") == "%50\\%\\_off\\\\%"


def test_later_duplicates_point_at_the_first_occurrence() -> None:
    """CATALOGUE-8: only the first occurrence is processed; later ones name its index."""
    assert later_duplicates(["a", "b", "a", None, None, "b", "a"]) == {2: 0, 5: 1, 6: 0}
    assert later_duplicates([]) == {}


def test_metadata_is_measured_in_utf8_bytes_of_compact_json() -> None:
    """CATALOGUE-6: at most 16384 bytes of UTF-8 in compact JSON form; key order kept."""
    value = {"z": 1, "a": {"é": [1, 2.5, None, True]}}
    assert compact_json(value) == '{"z":1,"a":{"é":[1,2.5,null,true]}}'
    at_limit = {"k": "x" * (MAX_METADATA_BYTES - len('{"k":""}'))}
    assert len(compact_json(at_limit).encode()) == MAX_METADATA_BYTES
    assert fits(compact_json(at_limit))
    over = {"k": "x" * (MAX_METADATA_BYTES - len('{"k":""}') - 1) + "é"}
    assert len(compact_json(over)) == MAX_METADATA_BYTES
    assert not fits(compact_json(over))
    assert json.loads(compact_json(value)) == value
