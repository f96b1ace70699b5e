"""The customer's profile edited in the back office (PORTAL-11): name, email, phone, date of birth,
locale and external id, through the same core update as the API's customer update, so the same
rules refuse the same input with the same error codes, shown as messages with the API's status."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.params import FromPath

from loyalty_core.accounts.services import CustomerService
from loyalty_core.bounds import CUSTOMER_EMAIL, CUSTOMER_NAME, CUSTOMER_PHONE, EXTERNAL_ID
from loyalty_core.customers.models import Locale
from loyalty_core.customers.reads.customer import CustomerView
from loyalty_core.customers.rules import consent
from loyalty_core.error_status import status_of
from loyalty_core.errors import DomainError
from loyalty_core.text import is_email
from loyalty_portal.access import Cfg, Db, Me
from loyalty_portal.forms import Form, field_problems
from loyalty_portal.pages.customers import CURRENT, customer_id_of
from loyalty_portal.web import MOUNT_PATH, render, see_other

FIELDS = ("first_name", "last_name", "email", "phone", "date_of_birth", "locale", "external_id")
LOCALES = tuple(locale.value for locale in Locale)


def values_of(customer: CustomerView) -> dict[str, str]:
    """The customer's profile as the form shows it."""
    return {name: "" if getattr(customer, name) is None else str(getattr(customer, name)) for name in FIELDS}


def changes_of(form: Form) -> dict[str, Any]:
    """Every field of the form, an empty one clearing its value, as a PUT of the whole profile."""
    email = form.text("email", CUSTOMER_EMAIL)
    if email is not None and not is_email(email):
        form.problems.setdefault("email", []).append("An email address such as anna@example.com.")
    locale = form.text("locale")
    if locale is not None and locale not in LOCALES:
        form.problems.setdefault("locale", []).append(f"One of {', '.join(LOCALES)}.")
    changes = {
        "first_name": form.line("first_name", CUSTOMER_NAME),
        "last_name": form.line("last_name", CUSTOMER_NAME),
        "email": email,
        "phone": form.line("phone", CUSTOMER_PHONE),
        "date_of_birth": form.day("date_of_birth"),
        "locale": locale,
        "external_id": form.line("external_id", EXTERNAL_ID),
    }
    form.check()
    return changes


class CustomerProfileController(Controller):
    path = "/customers/{customer_id:str}/edit"

    @get("/")
    async def edit(self, customer_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        customer = await CustomerService(db, config.clock).reads.get(visitor.vendor_id, customer_id_of(customer_id))
        return _form(visitor, customer, values_of(customer))

    @post("/")
    async def save(
        self, customer_id: FromPath[str], request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg
    ) -> Response[Any]:
        customers = CustomerService(db, config.clock)
        customer = await customers.reads.get(visitor.vendor_id, customer_id_of(customer_id))
        form = await Form.of(request)
        recorder = consent.Provenance(consent.PORTAL, f"{consent.PORTAL_USER}:{visitor.user_id}")
        try:
            changes = changes_of(form)
            async with db.begin_nested():
                await customers.profile.update(visitor.vendor_id, customer.id, changes, provenance=recorder)
        except DomainError as refused:
            typed = {name: form.raw.get(name, "") for name in FIELDS}
            problems = field_problems(refused)
            return _form(visitor, customer, typed, status=status_of(refused), error=refused.message, problems=problems)
        return see_other(f"{MOUNT_PATH}/customers/{customer.id}?done=profile")


def _form(
    visitor: Me, customer: CustomerView, values: dict[str, str], *, status: int = 200, **context: Any
) -> Response[str]:
    return render(
        "customer_edit.html",
        status=status,
        visitor=visitor,
        current=CURRENT,
        c=customer,
        values=values,
        locales=LOCALES,
        **context,
    )
