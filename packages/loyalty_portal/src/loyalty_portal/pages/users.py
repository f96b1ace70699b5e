"""The shop's portal users: list, invite, change role, deactivate (and back), mail a password-reset
link. An owner never types another person's password: an invitation mails a link to choose it
(STAFF-2), and answers alike whether or not the address signs in at another shop (STAFF-4). Every
change goes through the admin API's service, which ends the changed user's sessions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.params import FromPath, FromQuery

from loyalty_core.bounds import USER_EMAIL
from loyalty_core.error_status import status_of
from loyalty_core.errors import DomainError, ValidationFailed
from loyalty_core.listing import PER_PAGE, bounded_page, counted
from loyalty_core.staff.errors import UserNotFound
from loyalty_core.staff.models import PortalAction, Role, User
from loyalty_core.staff.services.activity import record
from loyalty_core.staff.services.links import Invitations, PasswordResets
from loyalty_core.staff.services.sessions import Visitor
from loyalty_core.staff.services.users import UserService
from loyalty_portal.access import OWNER_ONLY, Cfg, Db, Me
from loyalty_portal.forms import Form, row_id
from loyalty_portal.mails import after_the_answer, invitation_mail, reset_mail
from loyalty_portal.paging import page_number, pager_of
from loyalty_portal.web import MOUNT_PATH, portal_path, render, see_other

CURRENT = "Users"
DONE = {
    "invited": "Invitation sent. The link in it works once, for 72 hours.",
    "role": "The role is changed; the user signs in again.",
    "password": "A link to choose a new password is mailed to the user.",
    "deactivated": "The user is deactivated and signed out.",
    "activated": "The user may sign in again.",
}
ROLES = tuple(Role)


def user_id_of(raw: str) -> int:
    return row_id(raw, lambda: UserNotFound("The vendor has no user with this id.", user_id=raw))


def _role(form: Form) -> str | None:
    role = form.text("role", required=True)
    if role is not None and role not in set(Role):
        form.problems.setdefault("role", []).append("Choose owner or staff.")
    return role


def _problems(refused: DomainError) -> dict[str, list[str]]:
    """The service names a too-short password by a message key; the page says it in words."""
    if not isinstance(refused, ValidationFailed):
        return {}
    words = {"validation.min.string": "At least 12 characters."}
    return {field: [words.get(p, p) for p in found] for field, found in refused.fields.items()}


def _user_page(visitor: Visitor, user: User, **more: Any) -> Response[Any]:
    return render("user.html", visitor=visitor, current=CURRENT, user=user, roles=ROLES, **more)


class UsersController(Controller):
    path = "/users"
    opt = OWNER_ONLY

    @get("/")
    async def list_users(
        self, visitor: Me, db: Db, config: Cfg, done: FromQuery[str | None] = None, page: FromQuery[str] = ""
    ) -> Response[Any]:
        at = bounded_page(page_number(page))
        users, total = await UserService(db, config.clock, config.passwords).list_page(
            visitor.vendor_id, page=at, per_page=PER_PAGE
        )
        pager = pager_of(counted(list(users), total, page=at, per_page=PER_PAGE), portal_path("users"), {})
        invited = await Invitations(db, config.clock, config.passwords).pending(visitor.vendor_id)
        return render(
            "users.html",
            visitor=visitor,
            current=CURRENT,
            users=users,
            pager=pager,
            invited=invited,
            done=DONE.get(done or ""),
        )

    @get("/new")
    async def new_user(self, visitor: Me) -> Response[Any]:
        return render("user_form.html", visitor=visitor, current=CURRENT, values={"role": "staff"}, roles=ROLES)

    @post("/")
    async def invite_user(self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        form = await Form.of(request)
        try:
            email = form.matching("email", USER_EMAIL, "An email address such as name@shop.example.", required=True)
            role = _role(form)
            form.check()
            async with db.begin_nested():
                invited = await Invitations(db, config.clock, config.passwords).invite(
                    visitor.vendor_id, email=email or "", role=role or ""
                )
                await record(
                    db,
                    config.clock,
                    visitor.vendor_id,
                    visitor.user_id,
                    PortalAction.USER_INVITED,
                    detail=f"invited {email} as {role}",
                )
        except DomainError as refused:
            return render(
                "user_form.html",
                status=status_of(refused),
                visitor=visitor,
                current=CURRENT,
                values=form.raw,
                roles=ROLES,
                problems=_problems(refused),
                error=refused.message,
            )
        return after_the_answer(
            see_other(f"{MOUNT_PATH}/users?done=invited"), config, [invitation_mail(invited, config)]
        )

    @get("/{user_id:str}")
    async def show_user(
        self, user_id: FromPath[str], visitor: Me, db: Db, config: Cfg, done: FromQuery[str | None] = None
    ) -> Response[Any]:
        found = await UserService(db, config.clock, config.passwords).get(visitor.vendor_id, user_id_of(user_id))
        return _user_page(visitor, found, done=DONE.get(done or ""))

    @post("/{user_id:str}/role")
    async def change_role(
        self, user_id: FromPath[str], request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg
    ) -> Response[Any]:
        form = await Form.of(request)
        return await _change(visitor, db, config, user_id, form, "role", lambda: {"role": _role(form)})

    @post("/{user_id:str}/password")
    async def send_reset_link(self, user_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        """The user gets a reset link (as from the sign-in page); their password stays until they use it."""
        found = await UserService(db, config.clock, config.passwords).get(visitor.vendor_id, user_id_of(user_id))
        asked = await PasswordResets(db, config.clock, config.passwords).ask(found.email) if found.active else None
        if asked is None:
            return _user_page(
                visitor, found, status=409, error="No link was sent: the user is deactivated or was sent 3 this hour."
            )
        page = see_other(f"{MOUNT_PATH}/users/{found.id}?done=password")
        return after_the_answer(page, config, [reset_mail(asked, config)])

    @post("/{user_id:str}/deactivate")
    async def deactivate(self, user_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        return await _change(visitor, db, config, user_id, Form({}), "deactivated", lambda: {"active": False})

    @post("/{user_id:str}/activate")
    async def activate(self, user_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        return await _change(visitor, db, config, user_id, Form({}), "activated", lambda: {"active": True})


CHANGED = {"role": "changed the role of", "deactivated": "deactivated", "activated": "activated"}


async def _change(
    visitor: Visitor, db: Db, config: Cfg, raw_id: str, form: Form, done: str, read: Callable[[], dict[str, Any]]
) -> Response[Any]:
    """One change through the service; refused, the user's page again with the service's message."""
    users = UserService(db, config.clock, config.passwords)
    found = await users.get(visitor.vendor_id, user_id_of(raw_id))
    try:
        async with db.begin_nested():
            changes = read()
            form.check()
            await users.change(visitor.vendor_id, found.id, **changes)
            await record(
                db,
                config.clock,
                visitor.vendor_id,
                visitor.user_id,
                PortalAction.USER_CHANGED,
                subject_id=found.id,
                detail=f"{CHANGED[done]} {found.email}" + (f" to {changes['role']}" if "role" in changes else ""),
            )
    except DomainError as refused:
        await db.refresh(found)
        return _user_page(visitor, found, status=status_of(refused), problems=_problems(refused), error=refused.message)
    return see_other(f"{MOUNT_PATH}/users/{found.id}?done={done}")
