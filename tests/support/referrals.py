"""A vendor's referral programme and its plan's ``referrals`` feature written straight into the
tables, for tests of the customer reads, the registration with a code and the referral list (the
programme's own writer is the admin API's)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, insert, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from loyalty_core.referrals.models import ReferralProgramme


async def programme(session_or_conn: AsyncSession | AsyncConnection, vendor_id: int, **fields: Any) -> None:
    """The vendor's programme row (active, 100 and 50 points, no minimum, no cap, unless ``fields``
    say otherwise), inserted or replaced."""
    values = {
        "referrer_points": 100,
        "referee_points": 50,
        "min_purchase_amount": 0,
        "max_referrals_per_customer": 0,
        "active": True,
        **fields,
    }
    await session_or_conn.execute(delete(ReferralProgramme).where(ReferralProgramme.vendor_id == vendor_id))
    await session_or_conn.execute(insert(ReferralProgramme).values(vendor_id=vendor_id, **values))


async def referrals_feature(session_or_conn: AsyncSession | AsyncConnection, vendor_id: int, on: bool = True) -> None:
    """Give (or take) the vendor's plan the ``referrals`` feature."""
    await session_or_conn.execute(
        text("UPDATE plans SET feature_referrals = :on WHERE id = (SELECT plan_id FROM vendors WHERE id = :vendor_id)"),
        {"on": on, "vendor_id": vendor_id},
    )


async def referral_rows(session_or_conn: AsyncSession | AsyncConnection, vendor_id: int) -> list[dict[str, Any]]:
    """The vendor's referrals as stored, oldest first."""
    found = await session_or_conn.execute(
        text(
            "SELECT referrer_id, referee_id, status, completed_at, referrer_points, referee_points, transaction_id"
            " FROM referrals WHERE vendor_id = :vendor_id ORDER BY id"
        ),
        {"vendor_id": vendor_id},
    )
    return [dict(row) for row in found.mappings()]
