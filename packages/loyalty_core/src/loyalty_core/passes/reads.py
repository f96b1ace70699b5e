"""The back office's reads of the passes area: the suppression list for one shop (its own customers'
addresses that bounced or complained and that the shop has not switched mail on for again; another
shop's suppressions are not its to see, so every read joins the shop's customers), and how many card
mails are in each state now, over all vendors, for the operator's metrics (a ``failed`` count that
grows says mails are being given up on: refused for good, or not built or sent after their
attempts). And the shop's name and logo as its branding sets them, for the portal's header
(PORTAL-10)."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from psycopg import AsyncConnection
from sqlalchemy import Select, and_, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.customers.models import Customer, CustomerStatus
from loyalty_core.passes.models import EmailSuppression, MailStatus, PassBrandingRow, SuppressionRelease
from loyalty_core.text import mail_key


def _suppressed(vendor_id: int) -> Select[Any]:
    released = select(SuppressionRelease.id).where(
        SuppressionRelease.vendor_id == vendor_id, SuppressionRelease.email == EmailSuppression.email
    )
    return (
        select(EmailSuppression.email, EmailSuppression.reason, EmailSuppression.updated_at)
        .join(
            Customer,
            and_(
                Customer.vendor_id == vendor_id,
                func.lower(Customer.email) == EmailSuppression.email,
                Customer.status != CustomerStatus.ANONYMIZED,
            ),
        )
        .where(~released.exists())
        .distinct()
    )


async def suppressed(session: AsyncSession, vendor_id: int) -> Sequence[Any]:
    """Each address with its ``reason`` and ``updated_at``, in address order."""
    rows = await session.execute(_suppressed(vendor_id).order_by(EmailSuppression.email))
    return rows.all()


async def is_suppressed_for(session: AsyncSession, vendor_id: int, email: str) -> bool:
    query = _suppressed(vendor_id).where(EmailSuppression.email == mail_key(email))
    return (await session.execute(query)).first() is not None


_BY_STATUS = "SELECT status, count(*) FROM card_mails GROUP BY 1"


async def card_mails_by_status(conn: AsyncConnection[Any]) -> dict[str, int]:
    counts = dict.fromkeys((str(s) for s in MailStatus), 0)
    for status, count in await (await conn.execute(_BY_STATUS, prepare=True)).fetchall():
        counts[status] = int(count)
    return counts


class RegistrationState(StrEnum):
    """Where a registration's pushes stand, as the metrics count them."""

    CURRENT = "current"
    DUE = "due"
    RETRYING = "retrying"
    GIVEN_UP = "given_up"


_REGISTRATIONS = f"""
SELECT CASE
         WHEN r.known_fingerprint = p.fingerprint THEN '{RegistrationState.CURRENT}'
         WHEN r.gave_up_fingerprint = p.fingerprint THEN '{RegistrationState.GIVEN_UP}'
         WHEN r.attempts > 0 THEN '{RegistrationState.RETRYING}'
         ELSE '{RegistrationState.DUE}'
       END AS state,
       count(*) AS registrations
FROM pass_registrations r
JOIN wallet_passes p ON p.vendor_id = r.vendor_id AND p.id = r.pass_id
GROUP BY 1
"""
REGISTRATION_STATES = tuple(str(state) for state in RegistrationState)


async def pass_registrations_by_state(conn: AsyncConnection[Any]) -> dict[str, int]:
    """Devices registered for passes, over all vendors, by where their pushes stand (PASS-14, PASS-15):
    told of what the pass shows (``current``), to be pushed (``due``), failing and retried on the
    schedule (``retrying``), or every retry spent until the next change (``given_up``)."""
    counts = dict.fromkeys(REGISTRATION_STATES, 0)
    for state, registrations in await (await conn.execute(_REGISTRATIONS, prepare=True)).fetchall():
        counts[state] = int(registrations)
    return counts


async def shop_header(session: AsyncSession, vendor_id: int) -> tuple[str | None, bool]:
    """The shop's display name (None: its own name) and whether it has a logo, through the branding's key."""
    found = (
        await session.execute(
            select(PassBrandingRow.display_name, PassBrandingRow.logo_png.isnot(None)).where(
                PassBrandingRow.vendor_id == vendor_id
            )
        )
    ).one_or_none()
    if found is None:
        return None, False
    name, has_logo = found
    return name, bool(has_logo)


async def shop_logo(session: AsyncSession, vendor_id: int) -> bytes | None:
    """The shop's logo (a PNG checked as a pass's logo, PASS-8), None when it has none."""
    return await session.scalar(select(PassBrandingRow.logo_png).where(PassBrandingRow.vendor_id == vendor_id))
