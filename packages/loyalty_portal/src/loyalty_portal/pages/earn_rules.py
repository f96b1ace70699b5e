"""The shop's earn rules: list, create, edit (on the version it was opened at), delete, and an example
basket scored by the till's engine. Every write goes through the admin API's service."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.params import FromPath, FromQuery

from loyalty_core.earning.errors import EarnRuleNotFound
from loyalty_core.earning.models import EarnRule
from loyalty_core.earning.services import EarnRuleData, EarnRuleService
from loyalty_core.errors import DomainError, ValidationFailed
from loyalty_core.staff.sessions import Visitor
from loyalty_portal.access import OWNER_ONLY, Cfg, Db, Me
from loyalty_portal.forms import MAX_INT, Form
from loyalty_portal.pages.basket import preview_context
from loyalty_portal.web import MOUNT_PATH, render, see_other, status_of

CURRENT = "Earn rules"
DONE = {
    "created": "The earn rule is created.",
    "saved": "The earn rule is saved.",
    "deleted": "The earn rule is deleted.",
}
FIELDS = ("name", "points_per_unit", "unit_amount", "min_transaction_amount")
ALL_ROWS = 1000
"""A shop keeps a handful of rules; the page lists them all."""


def rule_id_of(raw: str) -> int:
    if not raw.isdigit() or len(raw) > 18:
        raise EarnRuleNotFound("The vendor has no earn rule with this id.", earn_rule_id=raw)
    return int(raw)


def values_of(form: Form) -> dict[str, Any]:
    """The rule's fields as typed; the bounds are the service's (EARN-13), so its sentences show."""
    values: dict[str, Any] = {
        "name": form.text("name", required=True),
        "points_per_unit": form.whole("points_per_unit", required=True, low=-MAX_INT),
        "unit_amount": form.whole("unit_amount", required=True, low=-MAX_INT),
        "min_transaction_amount": form.whole("min_transaction_amount", low=-MAX_INT) or 0,
        "active": form.flag("active"),
    }
    form.check()
    return values


def shown(rule: EarnRule) -> dict[str, str]:
    values = {name: str(getattr(rule, name)) for name in FIELDS}
    if rule.active:
        values["active"] = "on"
    values["version"] = str(rule.version)
    return values


def _form(visitor: Visitor, rule: EarnRule | None, values: dict[str, str], **more: Any) -> Response[Any]:
    return render("earn_rule_form.html", visitor=visitor, current=CURRENT, rule=rule, values=values, **more)


def _refused(visitor: Visitor, rule: EarnRule | None, form: Form, refused: DomainError) -> Response[Any]:
    problems = refused.fields if isinstance(refused, ValidationFailed) else {}
    return _form(visitor, rule, form.raw, status=status_of(refused), problems=problems, error=refused.message)


class EarnRulesController(Controller):
    path = "/earn-rules"
    opt = OWNER_ONLY

    @get("/")
    async def list_rules(
        self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg, done: FromQuery[str | None] = None
    ) -> Response[Any]:
        found = await EarnRuleService(db, config.clock).list_page(visitor.vendor_id, page=1, per_page=ALL_ROWS)
        preview = await preview_context(request, visitor.vendor_id, db, config)
        return render(
            "earn_rules.html",
            visitor=visitor,
            current=CURRENT,
            rules=found.items,
            done=DONE.get(done or ""),
            preview_path=f"{MOUNT_PATH}/earn-rules",
            **preview,
        )

    @get("/new")
    async def new_rule(self, visitor: Me) -> Response[Any]:
        return _form(visitor, None, {"active": "on", "min_transaction_amount": "0"})

    @post("/")
    async def create_rule(self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        form = await Form.of(request)
        try:
            async with db.begin_nested():
                await EarnRuleService(db, config.clock).create(visitor.vendor_id, EarnRuleData(**values_of(form)))
        except DomainError as refused:
            return _refused(visitor, None, form, refused)
        return see_other(f"{MOUNT_PATH}/earn-rules?done=created")

    @get("/{rule_id:str}")
    async def edit_rule(self, rule_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        found = await EarnRuleService(db, config.clock).get(visitor.vendor_id, rule_id_of(rule_id))
        return _form(visitor, found, shown(found))

    @post("/{rule_id:str}")
    async def save_rule(
        self, rule_id: FromPath[str], request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg
    ) -> Response[Any]:
        rules = EarnRuleService(db, config.clock)
        found = await rules.get(visitor.vendor_id, rule_id_of(rule_id))
        form = await Form.of(request)
        try:
            async with db.begin_nested():
                version = form.whole("version", required=True, low=1)
                changes = values_of(form)
                await rules.update(visitor.vendor_id, found.id, changes, expected_version=version)
        except DomainError as refused:
            return _refused(visitor, found, form, refused)
        return see_other(f"{MOUNT_PATH}/earn-rules?done=saved")

    @get("/{rule_id:str}/delete")
    async def confirm_delete(self, rule_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        found = await EarnRuleService(db, config.clock).get(visitor.vendor_id, rule_id_of(rule_id))
        return render(
            "confirm_delete.html",
            visitor=visitor,
            current=CURRENT,
            title=f"Delete earn rule {found.name}",
            note="Purchases from now on no longer earn its points; transactions already scored keep theirs.",
            action=f"{MOUNT_PATH}/earn-rules/{found.id}/delete",
            keep=f"{MOUNT_PATH}/earn-rules/{found.id}",
        )

    @post("/{rule_id:str}/delete")
    async def delete_rule(self, rule_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        await EarnRuleService(db, config.clock).delete(visitor.vendor_id, rule_id_of(rule_id))
        return see_other(f"{MOUNT_PATH}/earn-rules?done=deleted")
