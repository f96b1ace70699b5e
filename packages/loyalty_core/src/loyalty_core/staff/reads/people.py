"""The back office's reads of who did something, which other pages name: a shop's portal users (who
made a card batch) and the causers of its ledger entries (who adjusted)."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.staff.models import User
from loyalty_core.tenancy.models import ApiClient
from loyalty_core.wallet.models import CauserType

PORTAL_USER, API_CLIENT, IMPORT = CauserType.PORTAL_USER, CauserType.API_CLIENT, CauserType.IMPORT


async def user_emails(session: AsyncSession, vendor_id: int, user_ids: Collection[int]) -> dict[int, str]:
    """The emails of those of ``user_ids`` who are the shop's users, by id."""
    if not user_ids:
        return {}
    found = await session.execute(
        select(User.id, User.email).where(User.vendor_id == vendor_id, User.id.in_(list(user_ids)))
    )
    return {user_id: email for user_id, email in found.all()}


SYSTEM_NAME = "the service"
IMPORT_NAME = "an import"


async def causer_names(
    session: AsyncSession, vendor_id: int, causers: Collection[tuple[str, str | None]]
) -> dict[tuple[str, str | None], str]:
    """Who each ``(causer_type, causer_id)`` of the shop's ledger entries is, in words (LEDGER-6,
    PORTAL-12): a portal user's email, an API client's name, the service for the jobs, an import
    (with the email of the user who ran it). One query per kind, whatever the number of entries."""
    users = await user_emails(
        session, vendor_id, {int(i) for t, i in causers if t in (PORTAL_USER, IMPORT) and i and i.isdigit()}
    )
    client_ids = [i for t, i in causers if t == API_CLIENT and i]
    clients: dict[str, str] = {}
    if client_ids:
        found = await session.execute(
            select(ApiClient.client_id, ApiClient.name).where(
                ApiClient.vendor_id == vendor_id, ApiClient.client_id.in_(client_ids)
            )
        )
        clients = {client_id: name for client_id, name in found.all()}
    names = {}
    for kind, causer_id in causers:
        number = int(causer_id) if causer_id and causer_id.isdigit() else None
        if kind == PORTAL_USER:
            name = users.get(number or 0, "a former user")
        elif kind == API_CLIENT:
            name = clients.get(causer_id or "", "a removed API client")
        elif kind == IMPORT:
            name = f"{IMPORT_NAME} by {users[number]}" if number in users else IMPORT_NAME
        else:
            name = SYSTEM_NAME
        names[(kind, causer_id)] = name
    return names
