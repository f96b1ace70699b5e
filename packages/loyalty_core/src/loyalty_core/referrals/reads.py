"""Whether a vendor's customers show their referral codes (REFERRAL-6), as a column beside every
customer read: one ``EXISTS`` on the programme's unique vendor key and the plan's feature, inside the
read's own statement (no round trip of its own)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Boolean, literal_column

from loyalty_core.referrals.codes import referral_code


def codes_shown_sql(*, vendor: str) -> str:
    """True when the vendor ``vendor`` (an SQL expression) has a programme (active or not) and its
    plan has ``referrals``."""
    return f"""EXISTS (SELECT 1 FROM referral_programmes rp
               JOIN vendors rv ON rv.id = rp.vendor_id
               JOIN plans rl ON rl.id = rv.plan_id AND rl.feature_referrals
              WHERE rp.vendor_id = {vendor})"""


def codes_shown_column() -> Any:
    """:func:`codes_shown_sql` as the column ``referral_codes`` of an ORM select from ``customers``."""
    return literal_column(f"({codes_shown_sql(vendor='customers.vendor_id')})", Boolean).label("referral_codes")


def code_of(row: Mapping[Any, Any]) -> str | None:
    """The code a customer row shows: its own when the row's ``referral_codes`` says the vendor's
    customers have codes, else None."""
    return referral_code(row["id"]) if row["referral_codes"] else None
