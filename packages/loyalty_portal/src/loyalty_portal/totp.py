"""TOTP codes (RFC 6238: 6 digits, 30-second steps, SHA-1, as every authenticator app reads them) on
the service clock, over a secret sealed with the deployment's key and bound to its user."""

from __future__ import annotations

import hmac

import pyotp
import segno

from loyalty_core.clock import Clock
from loyalty_core.events.services.endpoints import Sealer
from loyalty_core.staff.services.second_factor import StepOf

TOLERANCE_STEPS = 1
"""A code of the step before or after the current one is taken too: a phone's clock drifts."""


def sealing_context(user_id: int) -> bytes:
    return f"portal-totp:user:{user_id}".encode()


def new_secret() -> str:
    return pyotp.random_base32()  # 160 bits, as RFC 4226 recommends


def step_checker(clock: Clock, sealer: Sealer, user_id: int) -> StepOf:
    """Finds the step of a typed code under the user's sealed secret."""

    def step_of(sealed: bytes, code: str) -> int | None:
        typed = code.strip().replace(" ", "")
        if len(typed) != 6 or not typed.isascii() or not typed.isdigit():
            return None
        totp = pyotp.TOTP(sealer.open(sealed, sealing_context(user_id)).decode())
        current = totp.timecode(clock.now())
        for step in range(current - TOLERANCE_STEPS, current + TOLERANCE_STEPS + 1):
            if hmac.compare_digest(totp.generate_otp(step), typed):
                return step
        return None

    return step_of


def enrolment(secret: str, email: str, shop: str) -> tuple[str, str]:
    """The ``otpauth://`` address an app scans, as an SVG QR code (a data URI the page's policy
    allows), and the key grouped by four for typing by hand."""
    address = pyotp.TOTP(secret).provisioning_uri(name=email, issuer_name=f"{shop} loyalty portal")
    qr = segno.make(address, error="m").svg_data_uri(scale=4, border=4)
    return qr, " ".join(secret[i : i + 4] for i in range(0, len(secret), 4))
