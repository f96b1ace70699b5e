"""The owner's campaign mail (``/mailings``, MAIL-1 to MAIL-18): the list with each mailing's status
and counts, a new draft, a draft's page (edit, the audience's live count, ``Send test`` to the
user's own address, ``Send`` now or at an instant), and ``Cancel`` while it is scheduled or sending;
a mailing that sends refreshes its counts. Every write is the admin API's service."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.params import FromPath

from loyalty_core.error_status import status_of
from loyalty_core.errors import DomainError, ValidationFailed
from loyalty_core.mailings.errors import MailingNotFound
from loyalty_core.mailings.models import MailingStatus
from loyalty_core.mailings.reads import MailingView, audience_count
from loyalty_core.mailings.rules import Audience
from loyalty_core.mailings.services import Draft, MailingService
from loyalty_core.staff.services.sessions import Visitor
from loyalty_portal.access import OWNER_ONLY, Cfg, Db, Me
from loyalty_portal.forms import Form, row_id
from loyalty_portal.web import portal_path, render, see_other

ALL_ROWS = 100
CRITERIA = ("min_balance", "inactive_days", "birthday_month")


def mailing_id_of(raw: str) -> int:
    return row_id(raw, lambda: MailingNotFound("No mailing of the vendor has this id.", mailing_id=raw))


def _draft_of(form: Form) -> Draft:
    subject = form.text("subject", required=True)
    body = form.text("body", required=True)
    audience = Audience(
        tiers=tuple(words) if (words := form.words("tiers")) else None,
        min_balance=form.whole("min_balance"),
        inactive_days=form.whole("inactive_days"),
        birthday_month=form.whole("birthday_month"),
    )
    form.check()
    return Draft(subject=subject, body=body, audience=audience)


def _values(view: MailingView) -> dict[str, str]:
    m = view.mailing
    audience = Audience.of_json(m.audience)
    values = {"subject": m.subject, "body": m.body, "tiers": ", ".join(audience.tiers or ())}
    for name in CRITERIA:
        value = getattr(audience, name)
        values[name] = "" if value is None else str(value)
    return values


def _problems(refused: DomainError) -> dict[str, list[str]]:
    """The service's field paths as the form's names (``audience.min_balance`` is ``min_balance``)."""
    if not isinstance(refused, ValidationFailed):
        return {}
    return {name.removeprefix("audience."): sentences for name, sentences in refused.fields.items()}


class MailingsController(Controller):
    path = "/mailings"
    opt = OWNER_ONLY

    async def _page(self, visitor: Visitor, db: Db, config: Cfg, view: MailingView, **more: Any) -> Response[Any]:
        m = view.mailing
        audience_now = None
        if m.status == MailingStatus.DRAFT:
            audience_now = await audience_count(db, visitor.vendor_id, Audience.of_json(m.audience), config.clock.now())
        context: dict[str, Any] = {"values": _values(view), "problems": {}, **more}
        return render(
            "mailing.html",
            visitor=visitor,
            current="Mailings",
            mailing=m,
            counts=view.counts,
            audience_now=audience_now,
            refresh=m.status == MailingStatus.SENDING,
            **context,
        )

    @get("/")
    async def list_mailings(self, visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        found = await MailingService(db, config.clock).reads.mailings(visitor.vendor_id, page=1, per_page=ALL_ROWS)
        return render("mailings.html", visitor=visitor, current="Mailings", mailings=found.items)

    @get("/new")
    async def new_mailing(self, visitor: Me) -> Response[Any]:
        return render("mailing.html", visitor=visitor, current="Mailings", mailing=None, values={})

    @post("/")
    async def create_mailing(self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        form = await Form.of(request)
        try:
            async with db.begin_nested():
                draft = _draft_of(form)
                made = await MailingService(db, config.clock).create(
                    visitor.vendor_id, draft.subject or "", draft.body or "", draft.audience or Audience()
                )
        except DomainError as refused:
            return render(
                "mailing.html",
                visitor=visitor,
                current="Mailings",
                mailing=None,
                values=form.raw,
                status=status_of(refused),
                problems=_problems(refused),
                error=refused.message,
            )
        return see_other(portal_path("mailings", made.mailing.id), flash="The mailing is saved as a draft.")

    @get("/{mailing_id:str}")
    async def show_mailing(self, mailing_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        view = await MailingService(db, config.clock).reads.get(visitor.vendor_id, mailing_id_of(mailing_id))
        return await self._page(visitor, db, config, view)

    async def _act(
        self, visitor: Visitor, db: Db, config: Cfg, raw_id: str, form: Form, action: Any, flash: str
    ) -> Response[Any]:
        mailings = MailingService(db, config.clock)
        view = await mailings.reads.get(visitor.vendor_id, mailing_id_of(raw_id))
        try:
            async with db.begin_nested():
                await action(mailings, view.mailing.id)
        except DomainError as refused:
            view = await mailings.reads.get(visitor.vendor_id, view.mailing.id)
            values = {**_values(view), **form.raw} if isinstance(refused, ValidationFailed) else _values(view)
            return await self._page(
                visitor,
                db,
                config,
                view,
                status=status_of(refused),
                problems=_problems(refused),
                error=refused.message,
                values=values,
            )
        return see_other(portal_path("mailings", view.mailing.id), flash=flash)

    @post("/{mailing_id:str}")
    async def save_mailing(
        self, mailing_id: FromPath[str], request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg
    ) -> Response[Any]:
        form = await Form.of(request)

        async def save(mailings: MailingService, found: int) -> None:
            await mailings.update(visitor.vendor_id, found, _draft_of(form))

        return await self._act(visitor, db, config, mailing_id, form, save, "The draft is saved.")

    @post("/{mailing_id:str}/test")
    async def test_mailing(
        self, mailing_id: FromPath[str], request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg
    ) -> Response[Any]:
        form = await Form.of(request)

        async def test(mailings: MailingService, found: int) -> None:
            await mailings.test(visitor.vendor_id, found, visitor.email)

        return await self._act(
            visitor, db, config, mailing_id, form, test, f"A test copy is on its way to {visitor.email}."
        )

    @post("/{mailing_id:str}/send")
    async def send_mailing(
        self, mailing_id: FromPath[str], request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg
    ) -> Response[Any]:
        form = await Form.of(request)

        async def send(mailings: MailingService, found: int) -> None:
            at = None
            typed = form.text("at")
            if typed:
                try:
                    at = datetime.fromisoformat(typed)
                except ValueError:
                    raise ValidationFailed("Some fields need another look.", {"at": ["A date and time."]}) from None
                at = at if at.tzinfo else at.replace(tzinfo=UTC)
            await mailings.send(visitor.vendor_id, found, at)

        return await self._act(visitor, db, config, mailing_id, form, send, "The mailing is on its way.")

    @post("/{mailing_id:str}/cancel")
    async def cancel_mailing(
        self, mailing_id: FromPath[str], request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg
    ) -> Response[Any]:
        form = await Form.of(request)

        async def cancel(mailings: MailingService, found: int) -> None:
            await mailings.cancel(visitor.vendor_id, found)

        return await self._act(visitor, db, config, mailing_id, form, cancel, "The mailing is cancelled.")
