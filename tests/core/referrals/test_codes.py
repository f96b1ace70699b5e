"""REFERRAL-6: a customer's referral code is a keyed permutation of its id, written with the card
alphabet, and decodes back to the id."""

from __future__ import annotations

import itertools
import re

from hypothesis import given
from hypothesis import strategies as st

from loyalty_core.random_text import READABLE
from loyalty_core.referrals.codes import DOMAIN, customer_id_of, referral_code

CODE = re.compile(f"REF-[{READABLE}]{{8}}")

ids = st.integers(min_value=0, max_value=DOMAIN - 1)


@given(ids)
def test_a_code_decodes_back_to_its_id(customer_id: int) -> None:
    code = referral_code(customer_id)
    assert code is not None
    assert CODE.fullmatch(code)
    assert customer_id_of(code) == customer_id


@given(st.text(alphabet=READABLE, min_size=8, max_size=8))
def test_every_code_of_the_format_is_some_customers(symbols: str) -> None:
    """The permutation is onto: every well-formed code names exactly one id, which encodes to it."""
    customer_id = customer_id_of("REF-" + symbols)
    assert customer_id is not None
    assert 0 <= customer_id < DOMAIN
    assert referral_code(customer_id) == "REF-" + symbols


def test_codes_of_a_sample_are_distinct_and_look_unrelated() -> None:
    codes = [referral_code(customer_id) for customer_id in range(1, 20_001)]
    assert len(set(codes)) == len(codes)
    # neighbours share no long common prefix: the code tells nothing of the id's order
    assert sum(a is not None and b is not None and a[:7] == b[:7] for a, b in itertools.pairwise(codes)) < 20


def test_codes_are_fixed_across_releases() -> None:
    """The round keys are constants: a code a customer shared yesterday names them tomorrow."""
    assert [referral_code(n) for n in (1, 2, 1000)] == ["REF-VCXHMXAA", "REF-HKFTPAK4", "REF-3QRMNJQE"]


def test_codes_are_read_case_insensitively_after_trimming() -> None:
    code = referral_code(4711)
    assert code is not None
    assert customer_id_of(f"  {code.lower()} ") == 4711


def test_anything_malformed_decodes_to_none() -> None:
    code = referral_code(4711)
    assert code is not None
    malformed = ("", "   ", "REF-", code[4:], code + "A", code[:-1], "REF-AAAAAAA0", "REF-AAAAAAAI", "XYZ-AAAAAAAA")
    for text in (*malformed, "REF_AAAAAAAA", "REF-AAAA AAAA"):
        assert customer_id_of(text) is None, text


def test_ids_outside_the_domain_have_no_code() -> None:
    assert referral_code(DOMAIN) is None
    assert referral_code(-1) is None
