"""The admin API's reads of plans, vendors, clients and branches: each list a page in id order, each
unknown id its resource's not-found."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.listing import Listed, page_of, rows_of
from loyalty_core.tenancy import errors as e
from loyalty_core.tenancy.models import ApiClient, Branch, Plan, Vendor
from loyalty_core.text import fold, folded, like_part


@dataclass(frozen=True, slots=True)
class ClientRead:
    """A client with its default branch's key; never its secret (only a hash of it is kept)."""

    client: ApiClient
    default_branch: str | None


def branch_not_found(external_id: str) -> e.AdminBranchNotFound:
    return e.AdminBranchNotFound(
        "The vendor has no branch with this external_id.", resource="branch", external_id=external_id
    )


class TenancyReads:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def plans(self, *, page: int, per_page: int) -> Listed[Plan]:
        return await page_of(self._session, select(Plan).order_by(Plan.id), page=page, per_page=per_page)

    async def vendors(self, *, status: str | None, q: str | None, page: int, per_page: int) -> Listed[Vendor]:
        """``q`` matches a part of the name, without regard to case or accents."""
        statement = select(Vendor).order_by(Vendor.id)
        if status is not None:
            statement = statement.where(Vendor.status == status)
        if q:
            statement = statement.where(folded(Vendor.name).like(like_part(fold(q))))
        return await page_of(self._session, statement, page=page, per_page=per_page)

    async def clients(self, vendor_id: int, *, page: int, per_page: int) -> Listed[ClientRead]:
        statement = (
            select(ApiClient, Branch.external_id)
            .outerjoin(Branch, Branch.id == ApiClient.default_branch_id)
            .where(ApiClient.vendor_id == vendor_id)
            .order_by(ApiClient.id)
        )
        listed = await rows_of(self._session, statement, page=page, per_page=per_page)
        return Listed([ClientRead(c, key) for c, key in listed.items], listed.total)

    async def client(self, client_id: str) -> ClientRead:
        row = (
            await self._session.execute(
                select(ApiClient, Branch.external_id)
                .outerjoin(Branch, Branch.id == ApiClient.default_branch_id)
                .where(ApiClient.client_id == client_id)
            )
        ).first()
        if row is None:
            raise e.ClientNotFound("No client has this client_id.", client_id=client_id)
        client, branch_key = row
        return ClientRead(client, branch_key)

    async def branches(self, vendor_id: int, *, page: int, per_page: int) -> Listed[Branch]:
        statement = select(Branch).where(Branch.vendor_id == vendor_id).order_by(Branch.id)
        return await page_of(self._session, statement, page=page, per_page=per_page)

    async def branch(self, vendor_id: int, external_id: str) -> Branch:
        found: Branch | None = await self._session.scalar(
            select(Branch).where(Branch.vendor_id == vendor_id, Branch.external_id == external_id)
        )
        if found is None:
            raise branch_not_found(external_id)
        return found
