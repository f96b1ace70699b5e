"""The owner's settings pages of one kind of row (earn rules, campaigns): the list with an example
basket scored by the till's engine, a new form, an edit form on the version it was opened at, save,
confirm and delete. Every write goes through the admin API's service, so the plan's features and
ceiling and every bound refuse here as they do there, their sentences beside the fields.

A page is a subclass of ``OwnerSettingsController`` whose ``Kind`` says what differs."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from litestar import Controller, Request, Response, get, post
from litestar.params import FromPath, FromQuery
from msgspec import Meta
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.error_status import status_of
from loyalty_core.errors import DomainError
from loyalty_core.staff.services.sessions import Visitor
from loyalty_portal.access import OWNER_ONLY, Cfg, Db, Me
from loyalty_portal.forms import Form, field_problems
from loyalty_portal.pages.basket import preview_context
from loyalty_portal.web import MOUNT_PATH, portal_path, render, see_other

ALL_ROWS = 1000
"""A shop keeps a handful of these (the plan caps campaigns); a page lists them all."""
DONE = ("created", "saved", "deleted")
"""The list's ``done`` after a write, shown as "The campaign is saved."."""
VERSION = Meta(ge=1)
"""The version an edit form was opened at (EARN-16): the portal's own field, no API body carries it."""
DELETE_NOTE = "Purchases from now on no longer earn its points; transactions already scored keep theirs."


class Row(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def name(self) -> str: ...


R = TypeVar("R", bound=Row)
R_co = TypeVar("R_co", bound=Row, covariant=True)


class Listing(Protocol[R_co]):
    @property
    def items(self) -> Sequence[R_co]: ...


class Settings(Protocol[R_co]):
    """What the admin API's service of the kind offers; ids are positional, each names its own."""

    async def list_page(self, vendor_id: int, *, page: int, per_page: int) -> Listing[R_co]: ...
    async def get(self, vendor_id: int, row_id: int, /) -> R_co: ...
    async def create(self, vendor_id: int, data: Any, /) -> R_co: ...
    async def update(
        self, vendor_id: int, row_id: int, changes: Mapping[str, object], /, *, expected_version: int | None = None
    ) -> R_co: ...
    async def delete(self, vendor_id: int, row_id: int, /) -> None: ...


@dataclass(frozen=True, slots=True)
class Kind(Generic[R]):
    """What one kind of settings row says: its service, how a form becomes values and a row a form,
    and the words and templates it shows."""

    slug: str
    """The path under the portal, ``earn-rules``."""
    noun: str
    """One row in words, ``earn rule``."""
    current: str
    """The navigation entry the pages light up."""
    row_name: str
    """What the form template calls the row (None on the new form); the list template, its plural."""
    list_template: str
    form_template: str
    service: Callable[[AsyncSession, Clock], Settings[R]]
    id_of: Callable[[str], int]
    """The path's id, or the kind's not-found refusal."""
    values_of: Callable[[Form], dict[str, Any]]
    """The row's fields as typed, checked (``form.check()``) before they are returned."""
    data_of: Callable[[dict[str, Any]], Any]
    """What the service's ``create`` takes, from ``values_of``."""
    shown: Callable[[R], dict[str, str]]
    """The row as the edit form's values, its ``version`` among them."""
    new_values: Mapping[str, str]
    """The new form's first values."""
    choices: Mapping[str, Any] = field(default_factory=dict)
    """What the form template offers in its selects."""


class OwnerSettingsController(Controller):
    """The pages of one ``Kind``; a subclass names its ``path`` and ``kind``."""

    opt = OWNER_ONLY
    kind: ClassVar[Kind[Any]]

    def _form(self, visitor: Visitor, row: Row | None, values: Mapping[str, str], **more: Any) -> Response[Any]:
        kind = self.kind
        context = {kind.row_name: row, **kind.choices, **more}
        return render(kind.form_template, visitor=visitor, current=kind.current, values=values, **context)

    def _refused(self, visitor: Visitor, row: Row | None, form: Form, refused: DomainError) -> Response[Any]:
        problems = field_problems(refused)
        return self._form(visitor, row, form.raw, status=status_of(refused), problems=problems, error=refused.message)

    def _done(self, what: str) -> Response[Any]:
        return see_other(f"{MOUNT_PATH}/{self.kind.slug}?done={what}")

    @get("/")
    async def list_rows(
        self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg, done: FromQuery[str | None] = None
    ) -> Response[Any]:
        found = await self.kind.service(db, config.clock).list_page(visitor.vendor_id, page=1, per_page=ALL_ROWS)
        preview = await preview_context(request, visitor.vendor_id, db, config)
        kind = self.kind
        context: dict[str, Any] = {f"{kind.row_name}s": found.items, **preview}
        return render(
            kind.list_template,
            visitor=visitor,
            current=kind.current,
            done=f"The {kind.noun} is {done}." if done in DONE else None,
            preview_path=f"{MOUNT_PATH}/{kind.slug}",
            **context,
        )

    @get("/new")
    async def new_row(self, visitor: Me) -> Response[Any]:
        return self._form(visitor, None, self.kind.new_values)

    @post("/")
    async def create_row(self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        form = await Form.of(request)
        try:
            async with db.begin_nested():
                data = self.kind.data_of(self.kind.values_of(form))
                await self.kind.service(db, config.clock).create(visitor.vendor_id, data)
        except DomainError as refused:
            return self._refused(visitor, None, form, refused)
        return self._done("created")

    @get("/{row_id:str}")
    async def edit_row(self, row_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        found = await self.kind.service(db, config.clock).get(visitor.vendor_id, self.kind.id_of(row_id))
        return self._form(visitor, found, self.kind.shown(found))

    @post("/{row_id:str}")
    async def save_row(
        self, row_id: FromPath[str], request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg
    ) -> Response[Any]:
        rows = self.kind.service(db, config.clock)
        found = await rows.get(visitor.vendor_id, self.kind.id_of(row_id))
        form = await Form.of(request)
        try:
            async with db.begin_nested():
                version = form.whole("version", VERSION, required=True)
                changes = self.kind.values_of(form)
                await rows.update(visitor.vendor_id, found.id, changes, expected_version=version)
        except DomainError as refused:
            return self._refused(visitor, found, form, refused)
        return self._done("saved")

    @get("/{row_id:str}/delete")
    async def confirm_delete(self, row_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        found = await self.kind.service(db, config.clock).get(visitor.vendor_id, self.kind.id_of(row_id))
        return render(
            "confirm_delete.html",
            visitor=visitor,
            current=self.kind.current,
            title=f"Delete {self.kind.noun} {found.name}",
            note=DELETE_NOTE,
            action=portal_path(self.kind.slug, found.id, "delete"),
            keep=portal_path(self.kind.slug, found.id),
        )

    @post("/{row_id:str}/delete")
    async def delete_row(self, row_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        await self.kind.service(db, config.clock).delete(visitor.vendor_id, self.kind.id_of(row_id))
        return self._done("deleted")
