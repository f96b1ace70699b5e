"""Rewards of every status: create, edit, delete, and give one at the counter."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.params import FromPath, FromQuery

from loyalty_core.accounts.services import CustomerService
from loyalty_core.bounds import COUNT, POSITIVE, REWARD_DESCRIPTION, REWARD_NAME
from loyalty_core.customers.errors import CustomerNotFound
from loyalty_core.customers.reads.customer import CustomerView
from loyalty_core.error_status import status_of
from loyalty_core.errors import DomainError
from loyalty_core.numbers import euro_amount, row_id_of
from loyalty_core.redemptions.services import PortalRedemptions
from loyalty_core.rewards import reads
from loyalty_core.rewards.errors import RewardNotFound
from loyalty_core.rewards.models import DISCOUNT_TYPES, Reward, RewardStatus, RewardType
from loyalty_core.rewards.services import RewardService, RewardWrites
from loyalty_core.staff.services.sessions import Visitor
from loyalty_core.wallet.models import Causer, CauserType
from loyalty_portal.access import Cfg, Db, Me
from loyalty_portal.forms import Form, field_problems, row_id
from loyalty_portal.names import customer_name
from loyalty_portal.paging import page_number, pager_of
from loyalty_portal.web import MOUNT_PATH, portal_path, render, see_other

CURRENT = "Rewards"
DONE = {
    "created": "The reward is created.",
    "saved": "The reward is saved.",
    "deleted": "The reward is deleted.",
}
CHOICES: dict[str, Any] = {"types": list(RewardType), "statuses": list(RewardStatus), "discount_types": DISCOUNT_TYPES}


def reward_id_of(raw: str) -> int:
    return row_id(raw, lambda: RewardNotFound("The shop has no reward with this id.", reward_id=raw))


def values_of(form: Form) -> dict[str, Any]:
    """The reward's fields from the form; an empty stock is unlimited."""
    values: dict[str, Any] = {
        "name": form.text("name", REWARD_NAME, required=True),
        "type": form.text("type", required=True),
        "description": form.text("description", REWARD_DESCRIPTION),
        "point_cost": form.whole("point_cost", POSITIVE, required=True),
        "status": form.text("status") or RewardStatus.ACTIVE,
        "total_stock": form.whole("total_stock", COUNT),
        "available_from": form.day("available_from"),
        "available_until": form.day("available_until"),
        "discount_type": form.text("discount_type"),
    }
    # one stored value, two meanings: a percentage, or an amount typed in euros and kept in cents
    if values["discount_type"] == "fixed_amount":
        values["discount_value"] = form.money("discount_amount", POSITIVE)
    else:
        values["discount_value"] = form.whole("discount_percent", POSITIVE)
    if values["type"] is not None and values["type"] not in set(RewardType):
        form.problems.setdefault("type", []).append("Choose discount or free product.")
    if values["status"] not in set(RewardStatus):
        form.problems.setdefault("status", []).append("Choose active or inactive.")
    if values["discount_type"] is not None and values["discount_type"] not in DISCOUNT_TYPES:
        form.problems.setdefault("discount_type", []).append("Choose percentage or fixed amount.")
    form.check()
    return values


async def customer_of(db: Db, config: Cfg, vendor_id: int, given: str) -> CustomerView:
    """A customer named by their id or a card code."""
    customers = CustomerService(db, config.clock)
    value = given.strip()
    if not value:
        raise CustomerNotFound("Enter a customer id or a card code.")
    customer_id = row_id_of(value)
    if customer_id is not None:
        return await customers.reads.get(vendor_id, customer_id)
    return await customers.reads.lookup(vendor_id, identifier=value)


def _form(visitor: Visitor, reward: Reward | None, values: dict[str, str], **more: Any) -> Response[Any]:
    return render("reward_form.html", visitor=visitor, current=CURRENT, reward=reward, values=values, **CHOICES, **more)


def _form_refused(visitor: Visitor, reward: Reward | None, form: Form, refused: DomainError) -> Response[Any]:
    """The reward form again, as typed, with the refusal's message and the fields it names."""
    status, problems = status_of(refused), field_problems(refused)
    return _form(visitor, reward, form.raw, status=status, problems=problems, error=refused.message)


async def _posted(request: Request[Any, Any, Any], visitor: Visitor, db: Db, reward_id: str) -> tuple[Reward, Form]:
    """The reward a form was posted to (a not-found before the form is read), and the form."""
    return await reads.reward(db, visitor.vendor_id, reward_id_of(reward_id)), await Form.of(request)


class RewardsController(Controller):
    path = "/rewards"

    @get("/")
    async def list_rewards(
        self,
        visitor: Me,
        db: Db,
        status: FromQuery[str] = "",
        sort: FromQuery[str] = "",
        page: FromQuery[str] = "",
        done: FromQuery[str | None] = None,
    ) -> Response[Any]:
        """A page of the shop's rewards; the status and sort stay in the query (PORTAL-18)."""
        status = status if status in set(RewardStatus) else ""
        sort = sort if sort in reads.REWARD_SORTS else ""
        found = await reads.rewards(db, visitor.vendor_id, status=status or None, sort=sort, page=page_number(page))
        return render(
            "rewards.html",
            visitor=visitor,
            current=CURRENT,
            rewards=found.items,
            pager=pager_of(found, portal_path("rewards"), {"status": status, "sort": sort}),
            filters={"status": status, "sort": sort},
            sorts=reads.REWARD_SORTS,
            done=DONE.get(done or ""),
            **CHOICES,
        )

    @get("/new")
    async def new_reward(self, visitor: Me) -> Response[Any]:
        return _form(visitor, None, {})

    @post("/")
    async def create_reward(self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        form = await Form.of(request)
        try:
            async with db.begin_nested():
                await RewardWrites(db, config.clock).create(visitor.vendor_id, values_of(form))
        except DomainError as refused:
            return _form_refused(visitor, None, form, refused)
        return see_other(f"{MOUNT_PATH}/rewards?done=created")

    @get("/{reward_id:str}")
    async def edit_reward(
        self, reward_id: FromPath[str], visitor: Me, db: Db, done: FromQuery[str | None] = None
    ) -> Response[Any]:
        found = await reads.reward(db, visitor.vendor_id, reward_id_of(reward_id))
        return _form(visitor, found, shown(found), done=DONE.get(done or ""))

    @post("/{reward_id:str}")
    async def save_reward(
        self, reward_id: FromPath[str], request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg
    ) -> Response[Any]:
        found, form = await _posted(request, visitor, db, reward_id)
        try:
            async with db.begin_nested():
                changes = values_of(form)
                if changes["total_stock"] == found.total_stock:
                    # an unchanged stock keeps the count of what is left; a new one restarts it
                    del changes["total_stock"]
                await RewardWrites(db, config.clock).update(visitor.vendor_id, found.id, changes)
        except DomainError as refused:
            return _form_refused(visitor, found, form, refused)
        return see_other(f"{MOUNT_PATH}/rewards?done=saved")

    @get("/{reward_id:str}/delete")
    async def confirm_delete(self, reward_id: FromPath[str], visitor: Me, db: Db) -> Response[Any]:
        found = await reads.reward(db, visitor.vendor_id, reward_id_of(reward_id))
        return render("reward_delete.html", visitor=visitor, current=CURRENT, reward=found)

    @post("/{reward_id:str}/delete")
    async def delete_reward(self, reward_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        await RewardService(db, config.clock).delete(visitor.vendor_id, reward_id_of(reward_id))
        return see_other(f"{MOUNT_PATH}/rewards?done=deleted")

    @post("/{reward_id:str}/give")
    async def give(
        self, reward_id: FromPath[str], request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg
    ) -> Response[Any]:
        found, form = await _posted(request, visitor, db, reward_id)
        try:
            async with db.begin_nested():
                customer = await customer_of(db, config, visitor.vendor_id, form.raw.get("customer", ""))
                given = await PortalRedemptions(db, config.clock).give(
                    visitor.vendor_id,
                    found.id,
                    customer.id,
                    causer=Causer(CauserType.PORTAL_USER, str(visitor.user_id)),
                )
        except DomainError as refused:
            typed = form.raw.get("customer", "")
            return _form(
                visitor, found, shown(found), status=status_of(refused), customer=typed, give_error=refused.message
            )
        # the redemption's own page shows the result, so reloading it gives nothing again (PORTAL-22)
        return see_other(
            f"{MOUNT_PATH}/redemptions/{given.confirmation_code}",
            flash=f"Given to {customer_name(customer)}: redemption {given.confirmation_code}.",
        )


def shown(reward: Reward) -> dict[str, str]:
    """The reward's fields as the form shows them."""
    fields = (
        "name",
        "type",
        "description",
        "point_cost",
        "status",
        "total_stock",
        "available_from",
        "available_until",
        "discount_type",
    )
    values = {name: "" if getattr(reward, name) is None else str(getattr(reward, name)) for name in fields}
    if reward.discount_value is not None:
        if reward.discount_type == "fixed_amount":
            values["discount_amount"] = euro_amount(reward.discount_value)
        else:
            values["discount_percent"] = str(reward.discount_value)
    return values
