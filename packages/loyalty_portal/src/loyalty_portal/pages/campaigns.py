"""The shop's campaigns as owner-settings pages (``owner_settings``): what a campaign's form holds."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from loyalty_core.earning.errors import CampaignNotFound
from loyalty_core.earning.models import Campaign
from loyalty_core.earning.rules.terms import FAMILIES, KINDS, MOMENTS, CampaignData, Family
from loyalty_core.earning.rules.validation import KIND_NEEDS, KIND_TAKES, MOMENT_TAKES, NAME_MAX
from loyalty_core.earning.services import CampaignService
from loyalty_core.numbers import euro_amount
from loyalty_portal.forms import Form, row_id
from loyalty_portal.pages.owner_settings import Kind, OwnerSettingsController

WHOLE = ("points", "max_points_per_transaction", "window_days", "inactive_days")


def campaign_id_of(raw: str) -> int:
    return row_id(raw, lambda: CampaignNotFound("The vendor has no campaign with this id.", campaign_id=raw))


def values_of(form: Form) -> dict[str, Any]:
    """Every field of the campaign as typed, an empty one unset; the bounds are the service's
    (EARN-13), so its sentences show beside the fields."""
    values: dict[str, Any] = {
        "name": form.text("name", required=True),
        "family": form.text("family") or "transaction",
        "moment": form.text("moment"),
        "kind": form.text("kind", required=True),
        "multiplier": form.number("multiplier"),
        "skus": form.words("skus"),
        "combinable": form.flag("combinable"),
        "min_transaction_amount": form.money("min_transaction_amount") or 0,
        "starts_on": form.day("starts_on"),
        "ends_on": form.day("ends_on"),
        "branches": form.words("branches"),
        "active": form.flag("active"),
    }
    for name in WHOLE:
        values[name] = form.whole(name)
    form.check()
    return _of_its_kind(values)


def _of_its_kind(values: dict[str, Any]) -> dict[str, Any]:
    """The values without the fields of other kinds, families and moments (PORTAL-20): the form hides
    them without a script and a value left in a hidden field is dropped, never refused; the fields
    the kind needs are still the service's to require (EARN-13)."""
    kind, moment = values["kind"], values["moment"]
    dropped = set(KIND_TAKES) - set(KIND_NEEDS.get(kind, KIND_TAKES))
    if values["family"] == Family.TRANSACTION:
        dropped |= {"moment", "window_days", "inactive_days"}
    elif moment in MOMENT_TAKES:
        dropped |= {"window_days", "inactive_days"} - MOMENT_TAKES[moment]
    return {name: None if name in dropped else value for name, value in values.items()}


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, Decimal):
        return f"{value.normalize():f}"
    if isinstance(value, list):
        return ", ".join(value)
    return str(value)


def shown(campaign: Campaign) -> dict[str, str]:
    fields = ("name", "family", "moment", "kind", "multiplier", "skus", "min_transaction_amount")
    more = ("starts_on", "ends_on", "branches", "version", *WHOLE)
    values = {name: _text(getattr(campaign, name)) for name in (*fields, *more)}
    values["min_transaction_amount"] = euro_amount(campaign.min_transaction_amount)
    for flag in ("combinable", "active"):
        if getattr(campaign, flag):
            values[flag] = "on"
    return values


def _data(values: dict[str, Any]) -> CampaignData:
    listed = {name: tuple(values[name]) for name in ("skus", "branches") if values[name] is not None}
    return CampaignData(**{**values, **listed})


class CampaignsController(OwnerSettingsController):
    path = "/campaigns"
    kind = Kind(
        slug="campaigns",
        noun="campaign",
        current="Campaigns",
        row_name="campaign",
        list_template="campaigns.html",
        form_template="campaign_form.html",
        service=CampaignService,
        id_of=campaign_id_of,
        values_of=values_of,
        data_of=_data,
        shown=shown,
        new_values={"active": "on", "family": "transaction", "min_transaction_amount": "0.00"},
        choices={"families": FAMILIES, "kinds": KINDS, "moments": MOMENTS, "name_max": NAME_MAX},
    )
