"""The shop's branches: list, create, edit, deactivate (and open again). Every write goes through the
admin API's service: the plan's location ceiling and the unique key refuse here as there."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.params import FromPath, FromQuery

from loyalty_core.bounds import ADMIN_NAME, BRANCH_KEY, BRANCH_TYPE
from loyalty_core.error_status import status_of
from loyalty_core.errors import DomainError
from loyalty_core.staff.services.sessions import Visitor
from loyalty_core.tenancy.models import Branch
from loyalty_core.tenancy.reads import TenancyReads
from loyalty_core.tenancy.services import TenancyService
from loyalty_portal.access import OWNER_ONLY, Cfg, Db, Me
from loyalty_portal.forms import Form, field_problems
from loyalty_portal.web import MOUNT_PATH, portal_path, render, see_other

CURRENT = "Branches"
DONE = {
    "created": "The branch is created.",
    "saved": "The branch is saved.",
    "deactivated": "The branch is deactivated: it takes no new transactions.",
    "activated": "The branch is open again.",
}
ALL_ROWS = 1000


def path_of(branch: Branch) -> str:
    return portal_path("branches", branch.external_id)


def values_of(form: Form, *, new: bool) -> dict[str, Any]:
    values: dict[str, Any] = {
        "name": form.line("name", ADMIN_NAME, required=True),
        "type": form.text("type", BRANCH_TYPE) or "store",
    }
    if new:
        values["external_id"] = form.text("external_id", BRANCH_KEY, required=True)
    form.check()
    return values


def _form(visitor: Visitor, branch: Branch | None, values: dict[str, str], **more: Any) -> Response[Any]:
    path = path_of(branch) if branch is not None else None
    return render("branch_form.html", visitor=visitor, current=CURRENT, branch=branch, values=values, path=path, **more)


def _refused(visitor: Visitor, branch: Branch | None, form: Form, refused: DomainError) -> Response[Any]:
    problems = field_problems(refused)
    return _form(visitor, branch, form.raw, status=status_of(refused), problems=problems, error=refused.message)


class BranchesController(Controller):
    path = "/branches"
    opt = OWNER_ONLY

    @get("/")
    async def list_branches(
        self, visitor: Me, db: Db, config: Cfg, done: FromQuery[str | None] = None
    ) -> Response[Any]:
        found = await TenancyReads(db, config.clock).branches(visitor.vendor_id, page=1, per_page=ALL_ROWS)
        rows = [(b, path_of(b)) for b in found.items]
        return render("branches.html", visitor=visitor, current=CURRENT, rows=rows, done=DONE.get(done or ""))

    @get("/new")
    async def new_branch(self, visitor: Me) -> Response[Any]:
        return _form(visitor, None, {"type": "store"})

    @post("/")
    async def create_branch(self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        form = await Form.of(request)
        try:
            async with db.begin_nested():
                await TenancyService(db, config.clock).create_branch(visitor.vendor_id, **values_of(form, new=True))
        except DomainError as refused:
            return _refused(visitor, None, form, refused)
        return see_other(f"{MOUNT_PATH}/branches?done=created")

    @get("/{external_id:str}")
    async def edit_branch(self, external_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        found = await TenancyReads(db, config.clock).branch(visitor.vendor_id, external_id)
        return _form(visitor, found, {"name": found.name, "type": found.type})

    @post("/{external_id:str}")
    async def save_branch(
        self, external_id: FromPath[str], request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg
    ) -> Response[Any]:
        found = await TenancyReads(db, config.clock).branch(visitor.vendor_id, external_id)
        form = await Form.of(request)
        try:
            async with db.begin_nested():
                changes = values_of(form, new=False)
                await TenancyService(db, config.clock).patch_branch(visitor.vendor_id, found.external_id, changes)
        except DomainError as refused:
            return _refused(visitor, found, form, refused)
        return see_other(f"{MOUNT_PATH}/branches?done=saved")

    @post("/{external_id:str}/deactivate")
    async def deactivate(self, external_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        await TenancyService(db, config.clock).patch_branch(visitor.vendor_id, external_id, {"active": False})
        return see_other(f"{MOUNT_PATH}/branches?done=deactivated")

    @post("/{external_id:str}/activate")
    async def activate(self, external_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        await TenancyService(db, config.clock).patch_branch(visitor.vendor_id, external_id, {"active": True})
        return see_other(f"{MOUNT_PATH}/branches?done=activated")
