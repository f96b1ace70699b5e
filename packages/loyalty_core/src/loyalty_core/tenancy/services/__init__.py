"""Tenancy services: plans, vendors, branches, clients, tokens, and resolving a token to its vendor;
``ceilings`` holds the one helper every plan ceiling uses."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.errors import ValidationFailed
from loyalty_core.tenancy import errors as e
from loyalty_core.tenancy.models import ApiClient, Branch, IssuedToken, Plan, Vendor
from loyalty_core.tenancy.rules.access import CLIENT_CREDENTIALS
from loyalty_core.tenancy.services import ceilings


def hash_secret(secret: str) -> str:
    """Client secrets are 256-bit random strings, so one SHA-256 is a sound, fast verifier."""
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class NewClient:
    client: ApiClient
    secret: str
    default_branch: Branch | None


class TenancyService:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    # --- plans and vendors -------------------------------------------------------------------

    async def create_plan(self, **fields: Any) -> Plan:
        plan = Plan(**fields)
        self._session.add(plan)
        await self._session.flush()
        return plan

    async def get_plan(self, plan_id: int) -> Plan:
        plan = await self._session.get(Plan, plan_id)
        if plan is None:
            raise e.PlanNotFound("No plan has this id.", plan_id=plan_id)
        return plan

    async def patch_plan(self, plan_id: int, changes: Mapping[str, Any]) -> Plan:
        """Changes the plan of every vendor on it at once: limits and features are read per request."""
        plan = await self.get_plan(plan_id)
        for name, value in changes.items():
            setattr(plan, name, value)
        await self._session.flush()
        return plan

    async def create_vendor(self, **fields: Any) -> Vendor:
        await self._plan_exists(fields["plan_id"])
        vendor = Vendor(**fields)
        self._session.add(vendor)
        await self._session.flush()
        return vendor

    async def get_vendor(self, vendor_id: int, *, for_update: bool = False) -> Vendor:
        vendor = await self._session.get(Vendor, vendor_id, with_for_update=for_update)
        if vendor is None:
            raise e.VendorNotFound("No vendor has this id.", vendor_id=vendor_id)
        return vendor

    async def patch_vendor(self, vendor_id: int, changes: Mapping[str, Any]) -> Vendor:
        vendor = await self.get_vendor(vendor_id)
        if "plan_id" in changes:
            await self._plan_exists(changes["plan_id"])
        for name, value in changes.items():
            setattr(vendor, name, value)
        await self._session.flush()
        return vendor

    async def _plan_exists(self, plan_id: int) -> None:
        if await self._session.get(Plan, plan_id) is None:
            raise ValidationFailed("The plan does not exist.", {"plan_id": ["The selected plan does not exist."]})

    # --- branches ----------------------------------------------------------------------------

    async def create_branch(self, vendor_id: int, *, external_id: str, name: str, type: str) -> Branch:
        plan = await ceilings.plan_of(self._session, vendor_id, lock=True)
        held = select(func.count()).select_from(Branch).where(Branch.vendor_id == vendor_id)
        await ceilings.ensure_room(self._session, plan.max_locations, held, ceilings.BRANCHES)
        branch = Branch(vendor_id=vendor_id, external_id=external_id, name=name, type=type, active=True)
        self._session.add(branch)
        try:
            async with self._session.begin_nested():
                await self._session.flush()
        except IntegrityError:
            raise e.BranchExternalIdDuplicate(
                "The vendor already has a branch with this external_id.", external_id=external_id
            ) from None
        return branch

    async def branch_by_external_id(self, vendor_id: int, external_id: str) -> Branch | None:
        found: Branch | None = await self._session.scalar(
            select(Branch).where(Branch.vendor_id == vendor_id, Branch.external_id == external_id)
        )
        return found

    async def patch_branch(self, vendor_id: int, external_id: str, changes: Mapping[str, Any]) -> Branch:
        await self.get_vendor(vendor_id)
        branch = await self.branch_by_external_id(vendor_id, external_id)
        if branch is None:
            raise e.AdminBranchNotFound(
                "The vendor has no branch with this external_id.", resource="branch", external_id=external_id
            )
        for name, value in changes.items():
            setattr(branch, name, value)
        await self._session.flush()
        return branch

    async def _branch_for_client(self, vendor_id: int, external_id: str | None) -> Branch | None:
        if external_id is None:
            return None
        branch = await self.branch_by_external_id(vendor_id, external_id)
        if branch is None:
            raise ValidationFailed(
                "The default branch does not exist.",
                {"default_branch": ["No branch of the vendor has this external_id."]},
            )
        return branch

    # --- clients and tokens ------------------------------------------------------------------

    async def create_client(
        self,
        vendor_id: int | None,
        *,
        name: str,
        default_branch: str | None = None,
        scopes: list[str] | None = None,
        grant_types: list[str] | None = None,
        platform: bool = False,
    ) -> NewClient:
        branch = None
        if vendor_id is not None:
            await self.get_vendor(vendor_id)
            branch = await self._branch_for_client(vendor_id, default_branch)
        secret = secrets.token_urlsafe(32)
        client = ApiClient(
            client_id="cl_" + secrets.token_hex(12),
            secret_hash=hash_secret(secret),
            name=name,
            vendor_id=vendor_id,
            default_branch_id=branch.id if branch else None,
            scopes=sorted(set(scopes if scopes is not None else ["read", "write"])),
            grant_types=list(grant_types if grant_types is not None else [CLIENT_CREDENTIALS]),
            platform=platform,
        )
        self._session.add(client)
        await self._session.flush()
        return NewClient(client=client, secret=secret, default_branch=branch)

    async def get_client(self, client_id: str) -> ApiClient:
        client: ApiClient | None = await self._session.scalar(select(ApiClient).where(ApiClient.client_id == client_id))
        if client is None:
            raise e.ClientNotFound("No client has this client_id.", client_id=client_id)
        return client

    async def patch_client(self, client_id: str, changes: Mapping[str, Any]) -> tuple[ApiClient, Branch | None]:
        client = await self.get_client(client_id)
        changes = dict(changes)
        if "default_branch" in changes:
            ext = changes.pop("default_branch")
            if client.vendor_id is None and ext is not None:
                raise ValidationFailed(
                    "A client without vendor has no branches.",
                    {"default_branch": ["A client without vendor cannot have a default branch."]},
                )
            branch = await self._branch_for_client(client.vendor_id, ext) if client.vendor_id else None
            client.default_branch_id = branch.id if branch else None
        if "scopes" in changes:
            changes["scopes"] = sorted(set(changes["scopes"]))
        for name, value in changes.items():
            setattr(client, name, value)
        await self._session.flush()
        return client, await self.default_branch_of(client)

    async def default_branch_of(self, client: ApiClient) -> Branch | None:
        if client.default_branch_id is None:
            return None
        return await self._session.get(Branch, client.default_branch_id)

    async def revoke_client(self, client_id: str) -> ApiClient:
        client = await self.get_client(client_id)
        if client.revoked_at is None:
            client.revoked_at = self._clock.now()
        await self._session.execute(
            update(IssuedToken).where(IssuedToken.api_client_id == client.id).values(revoked=True)
        )
        await self._session.flush()
        return client

    async def issue_token(self, client_id: str, secret: str, *, ttl_seconds: int) -> tuple[ApiClient, str, datetime]:
        """Check the credentials and record a new token; answers the client, its jti and expiry."""
        client: ApiClient | None = await self._session.scalar(select(ApiClient).where(ApiClient.client_id == client_id))
        if (
            client is None
            or client.revoked_at is not None
            or not hmac.compare_digest(client.secret_hash, hash_secret(secret))
        ):
            raise e.InvalidClient("The client credentials are not valid.")
        if CLIENT_CREDENTIALS not in client.grant_types:
            raise e.InvalidClient("This client may not use the client credentials grant.")
        jti = secrets.token_hex(16)
        expires_at = self._clock.now() + timedelta(seconds=ttl_seconds)
        self._session.add(IssuedToken(jti=jti, api_client_id=client.id, expires_at=expires_at))
        await self._session.flush()
        return client, jti, expires_at
