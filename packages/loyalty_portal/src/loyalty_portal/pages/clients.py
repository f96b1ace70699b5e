"""The shop's API clients (the tills' credentials): list, create (the secret shown once, on the page
that answers the creation), revoke. Every write goes through the admin API's service."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.params import FromPath, FromQuery

from loyalty_core.bounds import ADMIN_NAME, BRANCH_KEY
from loyalty_core.error_status import status_of
from loyalty_core.errors import DomainError
from loyalty_core.listing import PER_PAGE, bounded_page, counted
from loyalty_core.staff.models import PortalAction
from loyalty_core.staff.services.activity import record
from loyalty_core.staff.services.sessions import Visitor
from loyalty_core.tenancy.errors import ClientNotFound
from loyalty_core.tenancy.models import ApiClient, Branch
from loyalty_core.tenancy.reads import ClientRead, TenancyReads
from loyalty_core.tenancy.services import TenancyService
from loyalty_portal.access import OWNER_ONLY, Cfg, Db, Me
from loyalty_portal.forms import Form, field_problems
from loyalty_portal.once import shown_at
from loyalty_portal.paging import page_number, pager_of
from loyalty_portal.web import MOUNT_PATH, portal_path, render, see_other

CURRENT = "API clients"
SCOPES = ("read", "write", "webhooks")
"""``webhooks`` opens the events feed (personal data): off unless ticked."""
ALL_ROWS = 1000


async def own_client(db: Db, config: Cfg, vendor_id: int, client_id: str) -> ClientRead:
    """One of the shop's clients; another shop's, or a vendor-less one, is not found."""
    found = await TenancyReads(db, config.clock).client(client_id)
    if found.client.vendor_id != vendor_id:
        raise ClientNotFound("No client has this client_id.", client_id=client_id)
    return found


async def _branches(db: Db, config: Cfg, vendor_id: int) -> list[Branch]:
    return (await TenancyReads(db, config.clock).branches(vendor_id, page=1, per_page=ALL_ROWS)).items


def values_of(form: Form) -> dict[str, Any]:
    values: dict[str, Any] = {
        "name": form.text("name", ADMIN_NAME, required=True),
        "default_branch": form.text("default_branch", BRANCH_KEY),
        "scopes": [scope for scope in SCOPES if form.flag(f"scope_{scope}")],
    }
    if not values["scopes"]:
        form.problems.setdefault("scopes", []).append("Choose at least one scope.")
    form.check()
    return values


class ClientsController(Controller):
    path = "/clients"
    opt = OWNER_ONLY

    @get("/")
    async def list_clients(
        self, visitor: Me, db: Db, config: Cfg, done: FromQuery[str | None] = None, page: FromQuery[str] = ""
    ) -> Response[Any]:
        at = bounded_page(page_number(page))
        found = await TenancyReads(db, config.clock).clients(visitor.vendor_id, page=at, per_page=PER_PAGE)
        pager = pager_of(counted(found.items, found.total, page=at, per_page=PER_PAGE), portal_path("clients"), {})
        message = "The client is revoked: its tokens no longer work." if done == "revoked" else None
        return render("clients.html", visitor=visitor, current=CURRENT, clients=found.items, pager=pager, done=message)

    @get("/new")
    async def new_client(self, visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        branches = await _branches(db, config, visitor.vendor_id)
        values = {"scope_read": "on", "scope_write": "on"}
        return render("client_form.html", visitor=visitor, current=CURRENT, values=values, branches=branches)

    @post("/")
    async def create_client(self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        form = await Form.of(request)
        try:
            async with db.begin_nested():
                made = await TenancyService(db, config.clock).create_client(visitor.vendor_id, **values_of(form))
                await record(
                    db,
                    config.clock,
                    visitor.vendor_id,
                    visitor.user_id,
                    PortalAction.CLIENT_CREATED,
                    subject_id=made.client.id,
                )
        except DomainError as refused:
            return _refused(visitor, await _branches(db, config, visitor.vendor_id), form, refused)
        branch = made.default_branch.external_id if made.default_branch is not None else None
        created = render(
            "client_created.html",
            status=201,
            visitor=visitor,
            current=CURRENT,
            client=made.client,
            secret=made.secret,
            default_branch=branch,
        )
        # the secret is shown in this answer only, never kept to be shown after a redirect; the form
        # sent again lists the clients and makes none (PORTAL-22)
        again = f"The client {made.client.name} ({made.client.client_id}) was created; its secret was shown once."
        return shown_at(created, f"{MOUNT_PATH}/clients", again)

    @get("/{client_id:str}/revoke")
    async def confirm_revoke(self, client_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        found = await own_client(db, config, visitor.vendor_id, client_id)
        return _confirm(visitor, found.client)

    @post("/{client_id:str}/revoke")
    async def revoke(self, client_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        found = await own_client(db, config, visitor.vendor_id, client_id)
        if found.client.revoked_at is None:
            await TenancyService(db, config.clock).revoke_client(found.client.client_id)
            await record(
                db,
                config.clock,
                visitor.vendor_id,
                visitor.user_id,
                PortalAction.CLIENT_REVOKED,
                subject_id=found.client.id,
            )
        return see_other(f"{MOUNT_PATH}/clients?done=revoked")


def _refused(visitor: Visitor, branches: list[Branch], form: Form, refused: DomainError) -> Response[Any]:
    problems = field_problems(refused)
    return render(
        "client_form.html",
        status=status_of(refused),
        visitor=visitor,
        current=CURRENT,
        values=form.raw,
        branches=branches,
        problems=problems,
        error=refused.message,
    )


def _confirm(visitor: Visitor, client: ApiClient) -> Response[Any]:
    return render(
        "confirm_delete.html",
        visitor=visitor,
        current=CURRENT,
        title=f"Revoke client {client.name}",
        note=f"The till using {client.client_id} stops working at once: every token it holds is refused.",
        action=portal_path("clients", client.client_id, "revoke"),
        keep=f"{MOUNT_PATH}/clients",
        confirm="Confirm revoke",
        keep_label="Keep it",
    )
