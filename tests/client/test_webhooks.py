"""CLIENT-6: ``verify_webhook`` accepts a delivery signed with the secret within five minutes, by any
of its ``v1`` signatures, and refuses everything else with False, never an exception, however the
header, the body or the secret is made; it agrees with the receiver example of docs/webhooks.md."""

from __future__ import annotations

import hashlib
import hmac
import math
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from loyalty_client import verify_webhook

ROOT = Path(__file__).resolve().parents[2]
SECRET = "whsec_current"
BODY = b'{"id":"evt_1","type":"customer.created","data":{"id":42}}'
T = 1_764_151_200

# Each example takes microseconds, but a loaded machine may stall any one of them: no deadline, and
# no health check that times the generation.
PROPERTY = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
ANY_TEXT = st.text(alphabet=st.characters(exclude_categories=()))  # lone surrogates too


def sign(secret: str, t: int, body: bytes = BODY) -> str:
    return hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()


def headers(value: str) -> dict[str, str]:
    return {"Content-Type": "application/json", "Loyalty-Signature": value}


def test_a_fresh_signature_is_accepted() -> None:
    """CLIENT-6"""
    assert verify_webhook(SECRET, headers(f"t={T},v1={sign(SECRET, T)}"), BODY, now=T + 10) is True


def test_any_v1_may_match_while_a_secret_rotates() -> None:
    """CLIENT-6: the old secret signs alongside the new one; the receiver knows only one of them."""
    header = f"t={T},v1={sign('whsec_old', T)},v1={sign(SECRET, T)}"
    assert verify_webhook(SECRET, headers(header), BODY, now=T) is True
    assert verify_webhook("whsec_old", headers(header), BODY, now=T) is True
    assert verify_webhook("whsec_other", headers(header), BODY, now=T) is False


def test_the_header_name_is_matched_without_regard_to_case() -> None:
    """CLIENT-6"""
    assert verify_webhook(SECRET, {"loyalty-signature": f"t={T},v1={sign(SECRET, T)}"}, BODY, now=T) is True


GENUINE = f"v1={sign(SECRET, T)}"
CRAFTED = [
    pytest.param(f"t={T},{GENUINE} ", id="v1-with-a-trailing-space"),
    pytest.param(f"t=²,{GENUINE}", id="superscript-digit"),
    pytest.param(f"t=１７６４１５１２００,{GENUINE}", id="fullwidth-digits"),
    pytest.param(f"t={'9' * 400},{GENUINE}", id="too-large-for-a-float"),
    pytest.param(f"t={'9' * 5000},{GENUINE}", id="too-long-for-int"),
    pytest.param(f"t=,{GENUINE}", id="empty-timestamp"),
    pytest.param(",,=,t,v1,", id="empty-parts"),
    pytest.param(f"t={T},t={T + 1},{GENUINE}", id="t-repeated"),
    pytest.param(f"t={T},v1={'z' * 64}", id="non-hex-v1"),
    pytest.param(f"t={T},v1={'é' * 64}", id="non-ascii-v1"),
    pytest.param(f"t={T},v1={sign(SECRET, T).upper()}", id="upper-case-v1"),
    pytest.param(f"t={T},v1=", id="empty-v1"),
    pytest.param(f"t={T},v1={sign(SECRET, T)[:-1]}", id="short-v1"),
    pytest.param(f"t={T},v1=\ud800", id="lone-surrogate"),
]


@pytest.mark.parametrize(
    ("header", "body", "now"),
    [
        pytest.param(f"t={T},v1={sign(SECRET, T)}", BODY + b" ", T, id="body-changed"),
        pytest.param(f"t={T},v1={sign('whsec_wrong', T)}", BODY, T, id="other-secret"),
        pytest.param(f"t={T},v1={sign(SECRET, T)}", BODY, T + 301, id="older-than-five-minutes"),
        pytest.param(f"t={T},v1={sign(SECRET, T)}", BODY, T - 301, id="from-the-future"),
        pytest.param(f"t={T + 1},v1={sign(SECRET, T)}", BODY, T, id="timestamp-changed"),
        pytest.param(f"t={T},t={T},v1={sign(SECRET, T)}", BODY, T, id="two-timestamps"),
        pytest.param(f"v1={sign(SECRET, T)}", BODY, T, id="no-timestamp"),
        pytest.param(f"t=-{T},v1={sign(SECRET, T)}", BODY, T, id="signed-timestamp"),
        pytest.param(f"t={T}", BODY, T, id="no-signature"),
        pytest.param("", BODY, T, id="empty"),
        pytest.param(f"t={T},v1={sign(SECRET, T)}", BODY, math.nan, id="now-not-a-number"),
    ],
)
def test_anything_else_is_refused(header: str, body: bytes, now: float) -> None:
    """CLIENT-6"""
    assert verify_webhook(SECRET, headers(header), body, now=now) is False


@pytest.mark.parametrize("header", CRAFTED)
def test_a_crafted_header_is_refused_without_an_error(header: str) -> None:
    """CLIENT-6: odd timestamps and signatures, of which several once made the check raise
    (ValueError from ``int``, OverflowError from the age, TypeError from ``compare_digest``)."""
    now = float(T)  # a float, as time.time() is: the age of a huge integer overflows it
    assert verify_webhook(SECRET, headers(header), BODY, now=now) is False
    assert docs_example()(BODY, header, SECRET, now=now) is False


def test_a_missing_header_is_refused() -> None:
    """CLIENT-6"""
    assert verify_webhook(SECRET, {"Content-Type": "application/json"}, BODY, now=T) is False


def test_the_tolerance_is_the_callers_to_narrow() -> None:
    """CLIENT-6"""
    header = headers(f"t={T},v1={sign(SECRET, T)}")
    assert verify_webhook(SECRET, header, BODY, now=T + 300) is True
    assert verify_webhook(SECRET, header, BODY, now=T + 61, tolerance=60) is False
    assert verify_webhook(SECRET, header, BODY, now=T, tolerance=math.nan) is False


def test_bytes_and_text_are_taken_alike() -> None:
    """CLIENT-6: the headers of an ASGI server are bytes, a framework may hand over the body as text."""
    value = f"t={T},v1={sign(SECRET, T)}"
    assert verify_webhook(SECRET, {b"loyalty-signature": value.encode()}, BODY, now=T) is True
    assert verify_webhook(SECRET, headers(value), BODY.decode(), now=T) is True
    buffer: Any = bytearray(BODY)  # not in the signature, but what some servers hand over
    assert verify_webhook(SECRET, headers(value), buffer, now=T) is True
    assert verify_webhook(SECRET, {b"loyalty-signature": "t=²".encode()}, BODY, now=T) is False


def test_a_body_or_secret_utf8_cannot_encode_is_refused() -> None:
    """CLIENT-6: a lone surrogate cannot be part of what was signed."""
    value = f"t={T},v1={sign(SECRET, T)}"
    assert verify_webhook(SECRET, headers(value), BODY.decode() + "\udcff", now=T) is False
    assert verify_webhook(SECRET + "\ud800", headers(value), BODY, now=T) is False


def test_a_secret_with_non_ascii_characters_signs_as_utf8() -> None:
    """CLIENT-6"""
    secret = "whsec_grüße_✓"
    assert verify_webhook(secret, headers(f"t={T},v1={sign(secret, T)}"), BODY, now=T) is True
    assert verify_webhook(secret, headers(f"t={T},v1={sign(SECRET, T)}"), BODY, now=T) is False


def test_values_of_other_types_are_refused() -> None:
    """CLIENT-6: a mapping that is not of headers, or a body that is not bytes or text."""
    value = f"t={T},v1={sign(SECRET, T)}"
    odd: Any = {"Loyalty-Signature": 42, 7: value}
    assert verify_webhook(SECRET, odd, BODY, now=T) is False
    no_mapping: Any = [("Loyalty-Signature", value)]
    assert verify_webhook(SECRET, no_mapping, BODY, now=T) is False
    no_body: Any = None
    assert verify_webhook(SECRET, headers(value), no_body, now=T) is False


@PROPERTY
@given(
    header=ANY_TEXT | st.binary(),
    body=st.binary() | ANY_TEXT,
    secret=ANY_TEXT,
    now=st.floats() | st.integers(),
)
@example(header=f"t={'9' * 400},v1=00", body=BODY, secret=SECRET, now=T)
@example(header="t=٣,v1=00", body=BODY, secret=SECRET, now=T)
def test_any_header_body_and_secret_get_false_without_an_error(
    header: str | bytes, body: bytes | str, secret: str, now: float
) -> None:
    """CLIENT-6: nothing made without the secret is accepted, and nothing raises."""
    value: Any = header
    assert verify_webhook(secret, {"Loyalty-Signature": value}, body, now=now) is False


NO_COMMA = st.text(alphabet=st.characters(exclude_categories=(), exclude_characters=","))
FRAGMENTS = st.one_of(
    st.just(f"t={T}"),
    st.just(GENUINE),
    st.just(f"v1={sign('whsec_old', T)}"),
    st.just(""),
    st.builds("t={}".format, st.integers(min_value=-(10**20), max_value=10**400)),
    st.builds("t={}".format, NO_COMMA),
    st.builds("v1={}".format, NO_COMMA),
    st.builds("v1={:064x}".format, st.integers(min_value=0, max_value=2**256 - 1)),
    NO_COMMA,
)


@PROPERTY
@given(fragments=st.lists(FRAGMENTS, max_size=8), offset=st.integers(min_value=-400, max_value=400))
def test_true_exactly_for_one_timestamp_and_a_genuine_signature(fragments: list[str], offset: int) -> None:
    """CLIENT-6: headers put together from timestamps, signatures and noise are accepted exactly when
    they hold one timestamp, the signed one, within five minutes, and the signature of the body under
    it; the documented receiver answers the same."""
    header = ",".join(fragments)
    stamps = [f.split("=", 1)[1] for f in fragments if f.startswith("t=")]
    genuine = stamps == [str(T)] and GENUINE in fragments and abs(offset) <= 300
    assert verify_webhook(SECRET, headers(header), BODY, now=T + offset) is genuine
    assert docs_example()(BODY, header, SECRET, now=T + offset) is genuine


@PROPERTY
@given(body=st.binary(), secret=st.text(min_size=1), offset=st.integers(min_value=-300, max_value=300))
def test_any_body_signed_with_any_secret_is_accepted_and_no_other(body: bytes, secret: str, offset: int) -> None:
    """CLIENT-6"""
    value = f"t={T},v1={sign(secret, T, body)}"
    assert verify_webhook(secret, headers(value), body, now=T + offset) is True
    assert verify_webhook(secret, headers(value), body + b"\n", now=T + offset) is False
    assert verify_webhook(secret + "x", headers(value), body, now=T + offset) is False


@cache
def docs_example() -> Any:
    """The receiver example of docs/webhooks.md, run as written."""
    text = (ROOT / "docs" / "webhooks.md").read_text(encoding="utf-8")
    code = next(b for b in re.findall(r"```python\n(.*?)```", text, re.DOTALL) if "def verify_webhook" in b)
    namespace: dict[str, Any] = {}
    exec(compile(code, "docs/webhooks.md", "exec"), namespace)
    return namespace["verify_webhook"]


@pytest.mark.parametrize(
    ("header", "now"),
    [
        (f"t={T},v1={sign(SECRET, T)}", T),
        (f"t={T},v1={sign(SECRET, T)}", T + 300),
        (f"t={T},v1={sign(SECRET, T)}", T + 301),
        (f"t={T},v1=00,v1={sign(SECRET, T)}", T),
        (f"t={T},v1={sign(SECRET, T - 1)}", T),
        (f"t=1e9,v1={sign(SECRET, T)}", T),
        (f"t={T}, v1={sign(SECRET, T)}", T),
    ],
)
def test_the_client_agrees_with_the_documented_receiver(header: str, now: int) -> None:
    """CLIENT-6: the same answer for the same delivery."""
    documented = docs_example()
    assert verify_webhook(SECRET, headers(header), BODY, now=now) == documented(BODY, header, SECRET, now=now)
