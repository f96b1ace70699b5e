"""Admin API for a shop's portal users: create, list, change (role, active, password)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get, patch, post
from litestar.di import NamedDependency
from litestar.params import FromPath
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.staff.errors import UserEmailDuplicate, UserNotFound
from loyalty_core.staff.services.users import UserService
from loyalty_http.admin import users_schemas as s
from loyalty_http.params import KnownVendor, given
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.pagination import Page, page_number, paginate
from loyalty_http.wire.paths import parse_id


def _user_id(raw: str) -> int:
    return parse_id(raw, UserNotFound, "The vendor has no user with this id.", user_id=raw)


def _users(db: AsyncSession, clock: Clock) -> UserService:
    return UserService(db, clock)


class AdminUsersController(Controller):
    path = "/admin/v1/vendors/{vendor_id:str}/users"

    @post("/", opt=reads(auth="admin", body=s.UserCreate, errors=(UserEmailDuplicate,)), status_code=201)
    async def create_user(
        self,
        payload: NamedDependency[s.UserCreate],
        known_vendor: KnownVendor,
        db: NamedDependency[AsyncSession],
        clock: NamedDependency[Clock],
    ) -> Envelope[s.User]:
        user = await _users(db, clock).create(
            known_vendor, email=payload.email, role=payload.role, password=payload.password
        )
        return Envelope(s.User.of(user))

    @get("/", opt=reads(auth="admin", query=s.UsersQuery))
    async def list_users(
        self,
        request: Request[Any, Any, Any],
        params: NamedDependency[s.UsersQuery],
        known_vendor: KnownVendor,
        db: NamedDependency[AsyncSession],
        clock: NamedDependency[Clock],
    ) -> Envelope[Page[s.User]]:
        page = page_number(request)
        users, total = await _users(db, clock).list_page(known_vendor, page=page, per_page=params.per_page)
        items = [s.User.of(u) for u in users]
        return Envelope(paginate(request, items, total=total, page=page, per_page=params.per_page))

    @patch("/{user_id:str}", opt=reads(auth="admin", body=s.UserPatch, errors=(UserNotFound,)))
    async def patch_user(
        self,
        user_id: FromPath[str],
        payload: NamedDependency[s.UserPatch],
        known_vendor: KnownVendor,
        db: NamedDependency[AsyncSession],
        clock: NamedDependency[Clock],
    ) -> Envelope[s.User]:
        user = await _users(db, clock).change(
            known_vendor,
            _user_id(user_id),
            role=given(payload.role),
            active=given(payload.active),
            password=given(payload.password),
        )
        return Envelope(s.User.of(user))
