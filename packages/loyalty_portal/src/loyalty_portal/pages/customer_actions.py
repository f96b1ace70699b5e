"""The customer page's remaining actions: mail the card, record marketing consent, and merge with
a preview of what moves before it is confirmed."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, post
from litestar.params import FromPath

from loyalty_core.accounts.services import CustomerService
from loyalty_core.accounts.services.merge import MergeService
from loyalty_core.bounds import STATEMENT_VERSION
from loyalty_core.customers.models import IdentifierType
from loyalty_core.customers.reads.customer import CustomerView
from loyalty_core.customers.rules import consent
from loyalty_core.error_status import status_of
from loyalty_core.errors import DomainError, ValidationFailed
from loyalty_core.passes.services.sending import CardSends
from loyalty_core.redemptions.reads import customer_redemptions
from loyalty_core.staff.models import PortalAction
from loyalty_core.staff.services.activity import record
from loyalty_core.wallet.models import Causer, CauserType
from loyalty_portal.access import Cfg, Db, Me
from loyalty_portal.forms import Form
from loyalty_portal.names import customer_name
from loyalty_portal.once import REPEATABLE
from loyalty_portal.pages.customers import CURRENT, customer_id_of, page
from loyalty_portal.pages.rewards import customer_of
from loyalty_portal.web import MOUNT_PATH, render, see_other


class CustomerActionsController(Controller):
    path = "/customers/{customer_id:str}"

    @post("/send-card")
    async def send_card(self, customer_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        number = customer_id_of(customer_id)
        sends = CardSends(db, config.clock)
        try:
            async with db.begin_nested():
                await sends.accept(await sends.by_id(visitor.vendor_id, number), message_domain=config.mail_domain)
        except DomainError as refused:
            return await page(db, config, visitor, number, status=status_of(refused), error=refused.message)
        # the mail job's sweep picks the committed mail up within a minute
        return see_other(f"{MOUNT_PATH}/customers/{number}?done=sent")

    @post("/consent")
    async def save_consent(
        self, customer_id: FromPath[str], request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg
    ) -> Response[Any]:
        number = customer_id_of(customer_id)
        form = await Form.of(request)
        granted = form.raw.get("marketing_consent") == "yes"
        version = form.text("statement_version", STATEMENT_VERSION)
        recorder = consent.Provenance(consent.PORTAL, f"{consent.PORTAL_USER}:{visitor.user_id}")
        try:
            form.check()
            async with db.begin_nested():
                await CustomerService(db, config.clock).consent.record(
                    visitor.vendor_id, number, granted, version, provenance=recorder
                )
        except DomainError as refused:
            return await page(db, config, visitor, number, status=status_of(refused), error=refused.message)
        return see_other(f"{MOUNT_PATH}/customers/{number}?done=consent")

    @post("/merge/preview", opt=REPEATABLE)
    async def preview_merge(
        self, customer_id: FromPath[str], request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg
    ) -> Response[Any]:
        number = customer_id_of(customer_id)
        given = (await Form.of(request)).raw.get("keep", "")
        try:
            closing, kept = await _pair(db, config, visitor.vendor_id, number, given)
        except DomainError as refused:
            return await page(db, config, visitor, number, status=status_of(refused), error=refused.message, keep=given)
        redemptions = await customer_redemptions(db, visitor.vendor_id, closing.id)
        cards = [i for i in closing.identifiers if i.type != IdentifierType.EMAIL]
        return render(
            "customer_merge.html",
            visitor=visitor,
            current=CURRENT,
            closing=closing,
            kept=kept,
            moving=[i.value for i in cards if i.active],
            staying=[i.value for i in cards if not i.active],
            stops=stops_identifying(closing, kept),
            redemptions=len(redemptions),
        )

    @post("/merge")
    async def merge(
        self, customer_id: FromPath[str], request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg
    ) -> Response[Any]:
        number = customer_id_of(customer_id)
        keep = (await Form.of(request)).raw.get("keep", "")
        try:
            async with db.begin_nested():
                closing, kept = await _pair(db, config, visitor.vendor_id, number, keep)
                await MergeService(db, config.clock).merge(
                    visitor.vendor_id,
                    closing.id,
                    kept.id,
                    causer=Causer(CauserType.PORTAL_USER, str(visitor.user_id)),
                )
                await record(
                    db,
                    config.clock,
                    visitor.vendor_id,
                    visitor.user_id,
                    PortalAction.CUSTOMERS_MERGED,
                    subject_id=kept.id,
                    customer_id=closing.id,
                )
        except DomainError as refused:
            return await page(db, config, visitor, number, status=status_of(refused), error=refused.message, keep=keep)
        return see_other(f"{MOUNT_PATH}/customers/{kept.id}?done=merged")


def stops_identifying(closing: CustomerView, kept: CustomerView) -> list[str]:
    """What no longer finds the customer once ``closing`` is merged into ``kept`` (PORTAL-14), by the
    merge's own rules: the closed email stops resolving when the kept account has one (MERGE-4),
    and the closed external id stays on the closed account (MERGE-5)."""
    stops = []
    if closing.email and kept.email:
        stops.append(
            f"The email {closing.email} stops identifying the customer: {kept.email} stays the customer's email."
        )
    elif closing.email:
        stops.append(f"The email {closing.email} still finds the customer, as {customer_name(kept)} has no email.")
    if closing.external_id:
        stops.append(
            f"The external id {closing.external_id} stops identifying the customer: it stays on the closed "
            "account, a lookup by it answers the closed account and an update by it is refused."
        )
    return stops


async def _pair(db: Db, config: Cfg, vendor_id: int, closing_id: int, keep: str) -> tuple[CustomerView, CustomerView]:
    """The customer closing and the one kept (named by id or card code); never the same one."""
    closing = await CustomerService(db, config.clock).reads.get(vendor_id, closing_id)
    kept = await customer_of(db, config, vendor_id, keep)
    if kept.id == closing.id:
        raise ValidationFailed(
            "A customer cannot be merged into itself.", {"keep": ["The customer to keep must be another customer."]}
        )
    return closing, kept
