"""The shop's campaigns: list, create, edit (on the version it was opened at), delete, and an example
basket scored by the till's engine. Every write goes through the admin API's service, so the plan's
features and ceiling and every bound refuse here as they do there."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.params import FromPath, FromQuery

from loyalty_core.earning.errors import CampaignNotFound
from loyalty_core.earning.models import Campaign
from loyalty_core.earning.services import CampaignData, CampaignService
from loyalty_core.earning.terms import FAMILIES, KINDS, MOMENTS
from loyalty_core.errors import DomainError, ValidationFailed
from loyalty_core.staff.sessions import Visitor
from loyalty_portal.access import OWNER_ONLY, Cfg, Db, Me
from loyalty_portal.forms import MAX_INT, Form
from loyalty_portal.pages.basket import preview_context
from loyalty_portal.web import MOUNT_PATH, render, see_other, status_of

CURRENT = "Campaigns"
DONE = {
    "created": "The campaign is created.",
    "saved": "The campaign is saved.",
    "deleted": "The campaign is deleted.",
}
CHOICES: dict[str, Any] = {"families": FAMILIES, "kinds": KINDS, "moments": MOMENTS}
WHOLE = ("points", "max_points_per_transaction", "window_days", "inactive_days")
ALL_ROWS = 1000
"""A shop keeps a handful of campaigns (the plan caps them); the page lists them all."""


def campaign_id_of(raw: str) -> int:
    if not raw.isdigit() or len(raw) > 18:
        raise CampaignNotFound("The vendor has no campaign with this id.", campaign_id=raw)
    return int(raw)


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
        "min_transaction_amount": form.whole("min_transaction_amount", low=-MAX_INT) or 0,
        "starts_on": form.day("starts_on"),
        "ends_on": form.day("ends_on"),
        "branches": form.words("branches"),
        "active": form.flag("active"),
    }
    for name in WHOLE:
        values[name] = form.whole(name, low=-MAX_INT)
    form.check()
    return values


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
    for flag in ("combinable", "active"):
        if getattr(campaign, flag):
            values[flag] = "on"
    return values


def _form(visitor: Visitor, campaign: Campaign | None, values: dict[str, str], **more: Any) -> Response[Any]:
    return render(
        "campaign_form.html", visitor=visitor, current=CURRENT, campaign=campaign, values=values, **CHOICES, **more
    )


def _refused(visitor: Visitor, campaign: Campaign | None, form: Form, refused: DomainError) -> Response[Any]:
    problems = refused.fields if isinstance(refused, ValidationFailed) else {}
    return _form(visitor, campaign, form.raw, status=status_of(refused), problems=problems, error=refused.message)


class CampaignsController(Controller):
    path = "/campaigns"
    opt = OWNER_ONLY

    @get("/")
    async def list_campaigns(
        self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg, done: FromQuery[str | None] = None
    ) -> Response[Any]:
        found = await CampaignService(db, config.clock).list_page(visitor.vendor_id, page=1, per_page=ALL_ROWS)
        preview = await preview_context(request, visitor.vendor_id, db, config)
        return render(
            "campaigns.html",
            visitor=visitor,
            current=CURRENT,
            campaigns=found.items,
            done=DONE.get(done or ""),
            preview_path=f"{MOUNT_PATH}/campaigns",
            **preview,
        )

    @get("/new")
    async def new_campaign(self, visitor: Me) -> Response[Any]:
        return _form(visitor, None, {"active": "on", "family": "transaction", "min_transaction_amount": "0"})

    @post("/")
    async def create_campaign(self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        form = await Form.of(request)
        try:
            async with db.begin_nested():
                values = values_of(form)
                for listed in ("skus", "branches"):
                    if values[listed] is not None:
                        values[listed] = tuple(values[listed])
                await CampaignService(db, config.clock).create(visitor.vendor_id, CampaignData(**values))
        except DomainError as refused:
            return _refused(visitor, None, form, refused)
        return see_other(f"{MOUNT_PATH}/campaigns?done=created")

    @get("/{campaign_id:str}")
    async def edit_campaign(self, campaign_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        found = await CampaignService(db, config.clock).get(visitor.vendor_id, campaign_id_of(campaign_id))
        return _form(visitor, found, shown(found))

    @post("/{campaign_id:str}")
    async def save_campaign(
        self, campaign_id: FromPath[str], request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg
    ) -> Response[Any]:
        campaigns = CampaignService(db, config.clock)
        found = await campaigns.get(visitor.vendor_id, campaign_id_of(campaign_id))
        form = await Form.of(request)
        try:
            async with db.begin_nested():
                version = form.whole("version", required=True, low=1)
                changes = values_of(form)
                await campaigns.update(visitor.vendor_id, found.id, changes, expected_version=version)
        except DomainError as refused:
            return _refused(visitor, found, form, refused)
        return see_other(f"{MOUNT_PATH}/campaigns?done=saved")

    @get("/{campaign_id:str}/delete")
    async def confirm_delete(self, campaign_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        found = await CampaignService(db, config.clock).get(visitor.vendor_id, campaign_id_of(campaign_id))
        return render(
            "confirm_delete.html",
            visitor=visitor,
            current=CURRENT,
            title=f"Delete campaign {found.name}",
            note="Purchases from now on no longer earn its points; transactions already scored keep theirs.",
            action=f"{MOUNT_PATH}/campaigns/{found.id}/delete",
            keep=f"{MOUNT_PATH}/campaigns/{found.id}",
        )

    @post("/{campaign_id:str}/delete")
    async def delete_campaign(self, campaign_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        await CampaignService(db, config.clock).delete(visitor.vendor_id, campaign_id_of(campaign_id))
        return see_other(f"{MOUNT_PATH}/campaigns?done=deleted")
