"""PORTAL-5: the portal's addresses are built from ids, every path segment encoded, never from text a
shop stored: a card value shaped like a path cannot turn a button into another action."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.async_api import Page, expect

from tests.portal.browser_shop import make_live_shop, rows, sign_in
from tests.support.live import Live

TEMPLATES = Path(__file__).resolve().parents[2] / "packages/loyalty_portal/src/loyalty_portal/templates"
ADDRESS = re.compile(r'\b(?:action|href)="([^"]*)"')
SHOWN = re.compile(r"{{(.*?)}}")
BUILT_IN_PYTHON = {"base", "path", "preview_path", "action", "keep", "older"}
"""Addresses a page's controller builds with the one path helper (``loyalty_portal.web.portal_path``)."""


async def test_a_card_value_shaped_like_a_path_blocks_that_card_and_nothing_else(page: Page, live: Live) -> None:
    shop = make_live_shop(live)
    status, other = live.call(
        "POST", "/api/v1/customers", {"email": f"other{shop.vendor_id}@customer.example"}, shop.token
    )
    assert status == 201, other
    victim = other["data"]["id"]
    value = f"../../{victim}/anonymize?"
    imported = live.admin(
        "POST",
        f"/admin/v1/vendors/{shop.vendor_id}/customers/import",
        {"customers": [{"first_name": "Imported", "identifiers": [{"type": "barcode", "value": value}]}]},
    )
    [result] = imported["results"]
    holder = result["customer"]["id"]
    await sign_in(page, live, shop.owner)
    await page.goto(f"{live.url}/portal/customers/{holder}")
    row = page.get_by_role("row").filter(has_text=value)
    await row.get_by_role("button", name="Block card").click()
    await expect(page.get_by_role("status")).to_have_text("The card is blocked.")
    await expect(page).to_have_url(f"{live.url}/portal/customers/{holder}?done=blocked")
    states = rows(
        live.database_url,
        "SELECT value, active FROM customer_identifiers WHERE customer_id = %(c)s ORDER BY id",
        c=holder,
    )
    assert [(v, a) for v, a in states if v == value] == [(value, False)]
    assert all(active for v, active in states if v != value)
    [(victim_status, victim_email)] = rows(
        live.database_url, "SELECT status, email FROM customers WHERE id = %(c)s", c=victim
    )
    assert (victim_status, victim_email) == ("active", f"other{shop.vendor_id}@customer.example")


def test_every_address_in_a_template_is_built_from_ids_with_each_segment_encoded() -> None:
    """A value shown inside an ``action`` or ``href`` is the mount (``base``), an address its controller
    built with the path helper, or a segment passed through the ``segment`` filter."""
    unencoded = []
    for template in sorted(TEMPLATES.glob("*.html")):
        for address in ADDRESS.findall(template.read_text(encoding="utf-8")):
            if address.startswith("data:"):  # an inline image, not an address of the portal
                continue
            for shown in SHOWN.findall(address):
                expression = shown.strip()
                if expression in BUILT_IN_PYTHON or expression.endswith("| segment"):
                    continue
                unencoded.append(f"{template.name}: {{{{ {expression} }}}}")
    assert unencoded == []
