"""The shop's earn rules as owner-settings pages (``owner_settings``): what an earn rule's form holds."""

from __future__ import annotations

from typing import Any

from loyalty_core.bounds import POSITIVE
from loyalty_core.earning.errors import EarnRuleNotFound
from loyalty_core.earning.models import EarnRule
from loyalty_core.earning.rules.terms import EarnRuleData
from loyalty_core.earning.rules.validation import NAME_MAX
from loyalty_core.earning.services import EarnRuleService
from loyalty_core.numbers import euro_amount
from loyalty_portal.forms import Form, row_id
from loyalty_portal.pages.owner_settings import Kind, OwnerSettingsController

FIELDS = ("name", "points_per_unit", "unit_amount", "min_transaction_amount")
MONEY = ("unit_amount", "min_transaction_amount")
"""Stored in cents, typed and shown in euros (PORTAL-17)."""


def rule_id_of(raw: str) -> int:
    return row_id(raw, lambda: EarnRuleNotFound("The vendor has no earn rule with this id.", earn_rule_id=raw))


def values_of(form: Form) -> dict[str, Any]:
    """The rule's fields as typed; the bounds are the service's (EARN-13), so its sentences show."""
    values: dict[str, Any] = {
        "name": form.text("name", required=True),
        "points_per_unit": form.whole("points_per_unit", required=True),
        "unit_amount": form.money("unit_amount", POSITIVE, required=True),
        "min_transaction_amount": form.money("min_transaction_amount") or 0,
        "active": form.flag("active"),
    }
    form.check()
    return values


def shown(rule: EarnRule) -> dict[str, str]:
    values = {name: str(getattr(rule, name)) for name in FIELDS}
    for money in MONEY:
        values[money] = euro_amount(getattr(rule, money))
    if rule.active:
        values["active"] = "on"
    values["version"] = str(rule.version)
    return values


def _data(values: dict[str, Any]) -> EarnRuleData:
    return EarnRuleData(**values)


class EarnRulesController(OwnerSettingsController):
    path = "/earn-rules"
    kind = Kind(
        slug="earn-rules",
        noun="earn rule",
        current="Earn rules",
        row_name="rule",
        list_template="earn_rules.html",
        form_template="earn_rule_form.html",
        service=EarnRuleService,
        id_of=rule_id_of,
        values_of=values_of,
        data_of=_data,
        shown=shown,
        new_values={"active": "on", "unit_amount": "1.00", "min_transaction_amount": "0.00"},
        choices={"name_max": NAME_MAX},
    )
