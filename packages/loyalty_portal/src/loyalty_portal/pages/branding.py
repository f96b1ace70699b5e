"""Branding (owners only): the shop's name on the card, its colours and logo, with a preview of the
card as a wallet shows it. Stored through the same core service as the admin API's branding, and
the logo checked by the same pass maker rules (PASS-8)."""

from __future__ import annotations

import base64
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.datastructures import UploadFile
from litestar.params import FromQuery

from loyalty_core.bounds import COLOUR, DISPLAY_NAME
from loyalty_core.errors import DomainError
from loyalty_core.passes.reads import shop_logo
from loyalty_core.passes.services.cards import PassCards
from loyalty_core.passes.services.ports import BrandingFacts
from loyalty_portal.access import OWNER_ONLY, Cfg, Db, Me
from loyalty_portal.forms import Form, refused_save
from loyalty_portal.web import MOUNT_PATH, Refused, render, see_other

CURRENT = "Branding"
COLOURS = ("background", "foreground", "label")
MAX_LOGO_BYTES = 512 * 1024
MAX_BODY_BYTES = MAX_LOGO_BYTES + 65_536
"""A logo a wallet can show is at most 512 KiB; the rest of the form is a few fields."""


def preview_of(facts: BrandingFacts) -> dict[str, Any]:
    logo = base64.b64encode(facts.logo_png).decode() if facts.logo_png else None
    return {"facts": facts, "logo": logo}


async def page(db: Db, config: Cfg, visitor: Me, *, status: int = 200, **context: Any) -> Response[str]:
    facts = await PassCards(db, config.clock).branding(visitor.vendor_id)
    values = context.pop("values", None) or {
        "display_name": facts.shop_name,
        **{colour: getattr(facts, colour) for colour in COLOURS},
    }
    return render(
        "branding.html", status=status, visitor=visitor, current=CURRENT, values=values, **preview_of(facts), **context
    )


async def logo_of(request: Request[Any, Any, Any], config: Cfg, form: Form) -> bytes | None:
    """The uploaded logo's bytes when one was chosen; a file that is no PNG a wallet can show is a
    problem of the ``logo`` field."""
    upload = (await request.form()).get("logo")
    if not isinstance(upload, UploadFile):
        return None
    data = await upload.read(MAX_LOGO_BYTES + 1)
    if not data:
        return None
    if config.passes is None:
        problem: str | None = "Logos cannot be checked here; ask the service's team."
    else:
        problem = config.passes.image_problem(data, what="logo")
    if problem is not None:
        form.problems.setdefault("logo", []).append(problem)
    return data


class BrandingController(Controller):
    path = "/branding"
    opt = OWNER_ONLY

    @get("/")
    async def show(self, visitor: Me, db: Db, config: Cfg, done: FromQuery[str | None] = None) -> Response[Any]:
        return await page(db, config, visitor, done="The branding is saved." if done else None)

    @post("/", request_max_body_size=MAX_BODY_BYTES)
    async def save(self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        form = await Form.of(request)
        fields: dict[str, Any] = {"display_name": form.text("display_name", DISPLAY_NAME)}
        for colour in COLOURS:
            value = form.matching(colour, COLOUR, "A colour such as #1d1d1f.", required=True)
            fields[colour] = (value or "").lower()
        logo = await logo_of(request, config, form)
        if logo is not None:
            fields["logo_png"] = logo
        elif form.raw.get("remove_logo"):
            fields["logo_png"] = None
        try:
            form.check()
            async with db.begin_nested():
                await PassCards(db, config.clock).set_branding(visitor.vendor_id, fields)
        except DomainError as refused:
            return await page(db, config, visitor, **refused_save(refused, form.raw))
        return see_other(f"{MOUNT_PATH}/branding?done=1")


class ShopLogoController(Controller):
    """The shop's logo for the header of every page (PORTAL-10), open to staff and owners."""

    path = "/logo.png"

    @get("/")
    async def logo(self, visitor: Me, db: Db) -> Response[bytes]:
        found = await shop_logo(db, visitor.vendor_id)
        if found is None:
            raise Refused(404, "The shop has no logo.")
        return Response(found, media_type="image/png")
