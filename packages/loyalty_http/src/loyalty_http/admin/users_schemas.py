"""Wire structs of the admin API for a shop's portal users."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from loyalty_core import bounds
from loyalty_core.staff.models import Role
from loyalty_core.staff.models import User as UserModel
from loyalty_http.wire.pagination import DEFAULT_PER_PAGE, PerPage

Email = Annotated[str, bounds.USER_EMAIL]
Password = Annotated[str, bounds.PASSWORD]


class UserCreate(msgspec.Struct):
    email: Email
    role: Role
    password: Password


class UserPatch(msgspec.Struct):
    role: Role | UnsetType = UNSET
    active: bool | UnsetType = UNSET
    password: Password | UnsetType = UNSET


class UsersQuery(msgspec.Struct):
    per_page: PerPage = DEFAULT_PER_PAGE


class User(msgspec.Struct):
    id: int
    email: str
    role: str
    active: bool
    created_at: datetime

    @classmethod
    def of(cls, u: UserModel) -> User:
        return cls(id=u.id, email=u.email, role=u.role, active=u.active, created_at=u.created_at)
