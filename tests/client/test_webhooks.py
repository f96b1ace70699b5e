"""CLIENT-6: ``verify_webhook`` accepts a delivery signed with the secret within five minutes, by any
of its ``v1`` signatures, and refuses everything else; it agrees with the receiver example of
docs/webhooks.md."""

from __future__ import annotations

import hashlib
import hmac
import re
from pathlib import Path
from typing import Any

import pytest

from loyalty_client import verify_webhook

ROOT = Path(__file__).resolve().parents[2]
SECRET = "whsec_current"
BODY = b'{"id":"evt_1","type":"customer.created","data":{"id":42}}'
T = 1_764_151_200


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
    ],
)
def test_anything_else_is_refused(header: str, body: bytes, now: int) -> None:
    """CLIENT-6"""
    assert verify_webhook(SECRET, headers(header), body, now=now) is False


def test_a_missing_header_is_refused() -> None:
    """CLIENT-6"""
    assert verify_webhook(SECRET, {"Content-Type": "application/json"}, BODY, now=T) is False


def test_the_tolerance_is_the_callers_to_narrow() -> None:
    """CLIENT-6"""
    header = headers(f"t={T},v1={sign(SECRET, T)}")
    assert verify_webhook(SECRET, header, BODY, now=T + 300) is True
    assert verify_webhook(SECRET, header, BODY, now=T + 61, tolerance=60) is False


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
