"""The pages a person reaches signed out by a mailed link or from the sign-in form: choosing the
password of an invitation (``/welcome/{token}``), asking for a reset link (``/forgot-password``) and
choosing a new password with it (``/reset/{token}``). Each form carries the anonymous session's CSRF
token, checked by its handler as the sign-in form's is (PORTAL-3)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from litestar import Controller, Request, Response, get, post
from litestar.params import FromPath

from loyalty_core.errors import DomainError, ValidationFailed
from loyalty_core.staff.errors import LinkNotUsable
from loyalty_core.staff.services.links import Invitations, PasswordResets
from loyalty_core.staff.services.sessions import PortalSessions
from loyalty_core.text import MAX_EMAIL_LENGTH
from loyalty_portal.access import CSRF_AT_SIGN_IN, Cfg, Db, count_address
from loyalty_portal.forms import Form
from loyalty_portal.mails import after_the_answer, reset_mail
from loyalty_portal.pages.login import anonymous, checked_visitor, signed_out_page
from loyalty_portal.web import LOGIN, Refused, see_other

ASKED = (
    "If this email belongs to a portal account, a link to choose a new password is on its way. "
    "It works once, for 2 hours."
)
"""The one answer to a reset request, whether or not the email has an account (STAFF-5)."""
NOT_USABLE = "This link does not work any more: it was used already, it has expired, or it is not whole."
PASSWORD_SET = f"{LOGIN}?done=password"
T = TypeVar("T")


def _new_password(form: Form) -> str:
    """The chosen password, typed twice alike; the service checks its length."""
    password, again = form.raw.get("password", ""), form.raw.get("password_again", "")
    if password != again:
        form.problems.setdefault("password_again", []).append("The two passwords differ.")
    if len(password) > 1024:
        form.problems.setdefault("password", []).append("At most 1024 characters.")
    return password


def _problems(refused: DomainError) -> dict[str, list[str]]:
    """The form's own problems, or the service's (a too-short password, named by a message key)."""
    if not isinstance(refused, ValidationFailed):
        return {}
    words = {"validation.min.string": "At least 12 characters."}
    return {field: [words.get(p, p) for p in said] for field, said in refused.fields.items()}


class AccountLinksController(Controller):
    path = "/"

    @get("/welcome/{token:str}")
    async def welcome(self, token: FromPath[str], request: Request[Any, Any, Any], db: Db, config: Cfg) -> Any:
        cookie, visitor = await anonymous(request, PortalSessions(db, config.clock, config.passwords))
        invitation, shop = await _usable(Invitations(db, config.clock, config.passwords).open(token))
        return signed_out_page("set_password.html", visitor, cookie, config, email=invitation.email, shop=shop)

    @post("/welcome/{token:str}", opt=CSRF_AT_SIGN_IN)
    async def accept(self, token: FromPath[str], request: Request[Any, Any, Any], db: Db, config: Cfg) -> Any:
        invitations = Invitations(db, config.clock, config.passwords)
        return await _set_password(request, db, config, lambda p: invitations.accept(token, p))

    @get("/forgot-password")
    async def forgot_form(self, request: Request[Any, Any, Any], db: Db, config: Cfg) -> Any:
        cookie, visitor = await anonymous(request, PortalSessions(db, config.clock, config.passwords))
        return signed_out_page("forgot_password.html", visitor, cookie, config)

    @post("/forgot-password", opt=CSRF_AT_SIGN_IN)
    async def forgot(self, request: Request[Any, Any, Any], db: Db, config: Cfg) -> Any:
        await count_address(request, config, "Too many attempts from your address. Wait a minute and try again.")
        visitor = await checked_visitor(request, PortalSessions(db, config.clock, config.passwords))
        email = str((await request.form()).get("email") or "").strip()
        if not email:
            return signed_out_page("forgot_password.html", visitor, None, config, status=422, error="Enter your email")
        asked = None
        if "\x00" not in email and len(email) <= MAX_EMAIL_LENGTH:  # no account has such an address
            asked = await PasswordResets(db, config.clock, config.passwords).ask(email)
        page = signed_out_page("forgot_password.html", visitor, None, config, done=ASKED)
        return after_the_answer(page, config, [reset_mail(asked, config)] if asked else [])

    @get("/reset/{token:str}")
    async def reset_form(self, token: FromPath[str], request: Request[Any, Any, Any], db: Db, config: Cfg) -> Any:
        cookie, visitor = await anonymous(request, PortalSessions(db, config.clock, config.passwords))
        email = await _usable(PasswordResets(db, config.clock, config.passwords).open(token))
        return signed_out_page("set_password.html", visitor, cookie, config, email=email)

    @post("/reset/{token:str}", opt=CSRF_AT_SIGN_IN)
    async def reset(self, token: FromPath[str], request: Request[Any, Any, Any], db: Db, config: Cfg) -> Any:
        resets = PasswordResets(db, config.clock, config.passwords)
        return await _set_password(request, db, config, lambda p: resets.use(token, p))


async def _usable(opening: Awaitable[T]) -> T:
    try:
        return await opening
    except LinkNotUsable:
        raise Refused(404, NOT_USABLE) from None


async def _set_password(
    request: Request[Any, Any, Any], db: Db, config: Cfg, spend: Callable[[str], Awaitable[object]]
) -> Response[Any]:
    """Spend the link with the chosen password; refused, the form again saying why (nothing spent)."""
    visitor = await checked_visitor(request, PortalSessions(db, config.clock, config.passwords))
    form = await Form.of(request)
    password = _new_password(form)
    try:
        async with db.begin_nested():
            form.check()
            await _usable(spend(password))
    except DomainError as refused:
        return signed_out_page(
            "set_password.html",
            visitor,
            None,
            config,
            status=422 if isinstance(refused, ValidationFailed) else 409,
            email="",
            problems=_problems(refused),
            error=refused.message,
        )
    return see_other(PASSWORD_SET)
