"""Customers: search, the customer's page (cards, balance, ledger, purchases, redemptions) and the
counter's actions on it: adjust points, block or unblock a card, deactivate, anonymize."""

from __future__ import annotations

import secrets
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.params import FromPath, FromQuery

from loyalty_core.accounts.services import CustomerService
from loyalty_core.bounds import ADJUST_KEY, ADJUST_REASON, CUSTOMER_SEARCH
from loyalty_core.customer_list import SORTS, STATUSES, customer_list
from loyalty_core.customers.errors import CustomerNotFound
from loyalty_core.customers.models import IdentifierType
from loyalty_core.earning.reads import customer_purchases
from loyalty_core.error_status import status_of
from loyalty_core.errors import DomainError
from loyalty_core.listing import bounded_page, counted, offset_of
from loyalty_core.passes.services.records import PassRecords
from loyalty_core.redemptions.reads import customer_redemptions
from loyalty_core.referrals.till_referrals import referrals_page
from loyalty_core.staff.models import PortalAction
from loyalty_core.staff.reads import causer_names
from loyalty_core.staff.services.activity import record
from loyalty_core.wallet.errors import WalletNotFound
from loyalty_core.wallet.models import Causer, CauserType
from loyalty_core.wallet.services import WalletService
from loyalty_core.wallet.services.reads import LedgerFilter
from loyalty_portal.access import Cfg, Db, Me
from loyalty_portal.forms import Form, row_id
from loyalty_portal.paging import page_number, pager_of
from loyalty_portal.web import MOUNT_PATH, portal_path, render, see_other

CURRENT = "Customers"
SHOWN = 20
DONE = {
    "adjusted": "The points are adjusted.",
    "blocked": "The card is blocked.",
    "unblocked": "The card is unblocked.",
    "deactivated": "The customer is deactivated.",
    "sent": "The card is on its way to the customer's email.",
    "consent": "The marketing consent is saved.",
    "merged": "The customers are merged into this one.",
    "profile": "The profile is saved.",
}


def customer_id_of(raw: str) -> int:
    return row_id(raw, lambda: CustomerNotFound("The shop has no customer with this id.", customer_id=raw))


class CustomersController(Controller):
    path = "/customers"

    @get("/")
    async def search(
        self,
        visitor: Me,
        db: Db,
        config: Cfg,
        q: FromQuery[str] = "",
        status: FromQuery[str] = "",
        sort: FromQuery[str] = "",
        page: FromQuery[str] = "",
        done: FromQuery[str | None] = None,
    ) -> Response[Any]:
        """A page of the shop's customers; the search, status and sort stay in the query (PORTAL-18)."""
        q = q[: CUSTOMER_SEARCH.max_length]
        status = status if status in STATUSES else ""
        sort = sort if sort in SORTS else ""
        found = await customer_list(
            db, config.clock.now(), visitor.vendor_id, q=q, status=status, sort=sort, page=page_number(page)
        )
        pager = pager_of(found, portal_path("customers"), {"q": q, "status": status, "sort": sort})
        message = "The customer is anonymized." if done == "anonymized" else None
        return render(
            "customers.html",
            visitor=visitor,
            current=CURRENT,
            customers=found.items,
            pager=pager,
            q=q,
            status_filter=status,
            sort=sort,
            statuses=STATUSES,
            sorts=SORTS,
            done=message,
        )

    @get("/{customer_id:str}")
    async def show(
        self,
        customer_id: FromPath[str],
        visitor: Me,
        db: Db,
        config: Cfg,
        done: FromQuery[str | None] = None,
        ledger_page: FromQuery[str] = "",
        purchases_page: FromQuery[str] = "",
        referrals_page: FromQuery[str] = "",
    ) -> Response[Any]:
        pages = {
            "ledger_page": page_number(ledger_page),
            "purchases_page": page_number(purchases_page),
            "referrals_page": page_number(referrals_page),
        }
        return await page(db, config, visitor, customer_id_of(customer_id), pages=pages, done=DONE.get(done or ""))

    @post("/{customer_id:str}/adjust")
    async def adjust(
        self,
        customer_id: FromPath[str],
        request: Request[Any, Any, Any],
        visitor: Me,
        db: Db,
        config: Cfg,
    ) -> Response[Any]:
        number = customer_id_of(customer_id)
        form = await Form.of(request)
        try:
            amount = form.whole("amount", required=True)
            reason = form.text("reason", ADJUST_REASON, required=True)
            key = form.text("key", ADJUST_KEY)
            if amount == 0:
                form.problems.setdefault("amount", []).append("An adjustment moves at least one point.")
            form.check()
            async with db.begin_nested():
                await WalletService(db, config.clock).adjustments.adjust(
                    visitor.vendor_id,
                    number,
                    amount=amount or 0,
                    reason=reason or "",
                    key=key or secrets.token_hex(16),
                    causer=Causer(CauserType.PORTAL_USER, str(visitor.user_id)),
                )
        except DomainError as refused:
            return await page(db, config, visitor, number, status=status_of(refused), error=refused.message, form=form)
        return see_other(f"{MOUNT_PATH}/customers/{number}?done=adjusted")

    @post("/{customer_id:str}/cards/{action:str}")
    async def card(
        self,
        customer_id: FromPath[str],
        action: FromPath[str],
        request: Request[Any, Any, Any],
        visitor: Me,
        db: Db,
        config: Cfg,
    ) -> Response[Any]:
        """Block or unblock the card the form names: its value travels in the body, never in the
        address, where a stored value shaped like a path could name another action (PORTAL-5)."""
        number = customer_id_of(customer_id)
        if action not in ("block", "unblock"):
            raise CustomerNotFound("There is no such card action.")
        code = (await Form.of(request)).raw.get("card", "")
        try:
            async with db.begin_nested():
                await CustomerService(db, config.clock).identifiers.set_identifier_active(
                    visitor.vendor_id, number, code, action == "unblock"
                )
        except DomainError as refused:
            return await page(db, config, visitor, number, status=status_of(refused), error=refused.message)
        return see_other(f"{MOUNT_PATH}/customers/{number}?done={action}ed")

    @post("/{customer_id:str}/deactivate")
    async def deactivate(self, customer_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Any:
        number = customer_id_of(customer_id)
        await CustomerService(db, config.clock).status.deactivate(visitor.vendor_id, number)
        return see_other(f"{MOUNT_PATH}/customers/{number}?done=deactivated")

    @get("/{customer_id:str}/anonymize")
    async def confirm_anonymize(self, customer_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        customer = await CustomerService(db, config.clock).reads.get(visitor.vendor_id, customer_id_of(customer_id))
        return render("customer_anonymize.html", visitor=visitor, current=CURRENT, c=customer)

    @post("/{customer_id:str}/anonymize")
    async def anonymize(self, customer_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Any:
        number = customer_id_of(customer_id)
        await CustomerService(db, config.clock).status.anonymize(visitor.vendor_id, number)
        await record(
            db, config.clock, visitor.vendor_id, visitor.user_id, PortalAction.CUSTOMER_ANONYMIZED, customer_id=number
        )
        # PASS-17: the customer's pass and its devices' registrations go with the personal data
        await PassRecords(db, config.clock).forget(visitor.vendor_id, number)
        return see_other(f"{MOUNT_PATH}/customers?done=anonymized")


async def page(
    db: Db,
    config: Cfg,
    visitor: Me,
    customer_id: int,
    *,
    status: int = 200,
    pages: dict[str, int] | None = None,
    **context: Any,
) -> Response[str]:
    """The customer's page: who they are (the whole profile), their cards, balance, ledger with who
    caused each entry (PORTAL-12), purchases, redemptions, who referred them and whom they referred
    (REFERRAL-10); the ledger, the purchases and the referrals page each under its own query name,
    the others kept (PORTAL-18)."""
    at = {name: bounded_page(number, SHOWN) for name, number in (pages or {}).items()}
    ledger_at, purchases_at = at.get("ledger_page", 1), at.get("purchases_page", 1)
    customer = await CustomerService(db, config.clock).reads.get(visitor.vendor_id, customer_id)
    wallets = WalletService(db, config.clock)
    try:
        wallet = await wallets.reads.read(visitor.vendor_id, customer_id)
        expiring = wallet.expiring_soon
        entries, held = await wallets.reads.entries(
            visitor.vendor_id, customer_id, LedgerFilter(), offset=offset_of(ledger_at, SHOWN), limit=SHOWN
        )
    except WalletNotFound:
        expiring, entries, held = 0, [], 0
    purchases, bought = await customer_purchases(
        db, visitor.vendor_id, customer_id, offset=offset_of(purchases_at, SHOWN), limit=SHOWN
    )
    referrals_at = at.get("referrals_page", 1)
    referred, referring = await referrals_page(
        db, visitor.vendor_id, customer_id, offset=offset_of(referrals_at, SHOWN), limit=SHOWN
    )
    path = portal_path("customers", customer_id)
    kept = {name: str(number) for name, number in at.items() if number > 1}
    ledger = counted(entries, held, page=ledger_at, per_page=SHOWN)
    bought_page = counted(purchases, bought, page=purchases_at, per_page=SHOWN)
    cards = [i for i in customer.identifiers if i.type != IdentifierType.EMAIL]
    causers = await causer_names(db, visitor.vendor_id, {(e.causer_type, e.causer_id) for e in entries})
    return render(
        "customer.html",
        status=status,
        visitor=visitor,
        current=CURRENT,
        c=customer,
        cards=cards,
        expiring=expiring,
        entries=[(e, causers[(e.causer_type, e.causer_id)]) for e in entries],
        ledger_pager=pager_of(ledger, path, kept, name="ledger_page"),
        purchases=purchases,
        purchases_pager=pager_of(bought_page, path, kept, name="purchases_page"),
        referrals=referred,
        referrals_pager=pager_of(
            counted(referred, referring, page=referrals_at, per_page=SHOWN), path, kept, name="referrals_page"
        ),
        redemptions=await customer_redemptions(db, visitor.vendor_id, customer_id),
        key=secrets.token_hex(16),
        **context,
    )
