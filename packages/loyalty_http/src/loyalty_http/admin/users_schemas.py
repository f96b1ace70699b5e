"""Wire structs of the admin API for a shop's portal users."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from loyalty_core.staff.models import Role
from loyalty_core.staff.models import User as UserModel
from loyalty_http.wire.pagination import DEFAULT_PER_PAGE, PerPage

Email = Annotated[str, msgspec.Meta(min_length=3, max_length=254, pattern=r"^[^@\s]+@[^@\s]+$")]
# bounded above so a huge body cannot make the hasher work for long; the lower bound is a rule of
# the service (checked in core) so its message names the field as every rule's does
Password = Annotated[str, msgspec.Meta(max_length=1024)]


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
