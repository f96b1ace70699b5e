"""The owners' billing, branding, export and import pages over the composed service: the plan choice and its
refusal naming the limit (PLAN-3), the logo checked by the pass maker (PASS-8), and the CSV exports
with their formula guard (INPUT-20), each refused to staff."""

from __future__ import annotations

import re
from typing import Any

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_wallet_pass.images import encode_png
from tests.support.customers import register
from tests.support.portal import keyed, make_shop, set_clock, signed_in
from tests.support.tenants import admin

Client = AsyncTestClient[Litestar]
NOW = "2026-03-01T12:00:00Z"
GOOD_PNG = encode_png(4, 4, bytes(range(64)))
OWNER_PAGES = [
    "/portal/billing",
    "/portal/branding",
    "/portal/export",
    "/portal/export/customers.csv",
    "/portal/import",
    "/portal/import/1",
]


async def plan(client: Client, name: str, **limits: Any) -> int:
    made = await admin(client, "POST", "/admin/v1/plans", {"name": name, **limits})
    return int(made["id"])


async def test_staff_are_refused_the_owners_billing_branding_and_export(client: Client) -> None:
    shop = await make_shop(client)
    csrf = await signed_in(client, shop.staff)
    for path in [*OWNER_PAGES, "/portal/export/ledger.csv"]:
        page = await client.get(path)
        assert page.status_code == 403, path
        assert "Only the shop&#39;s owners may open this page." in page.text
    paths = (
        "/portal/billing/plan",
        "/portal/billing/pending",
        "/portal/branding",
        "/portal/import",
        "/portal/import/1/run",
    )
    for path in paths:
        refused = await client.post(path, data={**keyed(csrf), "plan_id": "1", "background": "#000000"})
        assert refused.status_code == 403, path
    home = await client.get("/portal/customers")
    assert 'href="/portal/billing"' not in home.text


async def test_an_owner_chooses_a_selectable_plan_and_is_refused_one_the_shop_outgrew(
    client: Client, engine: AsyncEngine
) -> None:
    """PLAN-3: switched at once; a plan under today's usage is refused naming the limit; an
    unselectable plan is refused, whatever its id."""
    shop = await make_shop(client, with_staff=False)
    for n in range(3):
        await register(client, shop.tenant, email=f"c{n}@billing.example")
    small = await plan(client, "Small", max_customers=2, selectable=True)
    large = await plan(client, "Large", max_customers=10, max_rewards=5, selectable=True)
    hidden = await plan(client, "Operator only", selectable=False)
    csrf = await signed_in(client, shop.owner)
    page = await client.get("/portal/billing")
    assert page.status_code == 200
    assert re.search(r"<th scope=\"row\">Customers</th>\s*<td>3</td>\s*<td>unlimited</td>", page.text)
    assert "Small" in page.text
    assert "Large" in page.text
    assert "Operator only" not in page.text

    refused = await client.post("/portal/billing/plan", data={**keyed(csrf), "plan_id": str(small)})
    assert refused.status_code == 422
    assert "The plan allows at most 2 customers; the shop holds 3." in refused.text
    for other in (str(hidden), "999999999", "x"):
        wrong = await client.post("/portal/billing/plan", data={**keyed(csrf), "plan_id": other})
        assert wrong.status_code == 422, other
        assert "This plan cannot be chosen." in wrong.text
    async with engine.connect() as conn:
        assert await conn.scalar(text("SELECT plan_id FROM vendors WHERE id = :v"), {"v": shop.vendor_id}) == (
            shop.tenant.plan_id
        )

    chosen = await client.post("/portal/billing/plan", data={**keyed(csrf), "plan_id": str(large)})
    assert chosen.status_code == 303
    assert chosen.headers["location"] == "/portal/billing?done=1"
    usage = await admin(client, "GET", f"/admin/v1/vendors/{shop.vendor_id}/usage")
    assert (usage["customers"], usage["max_customers"], usage["max_rewards"]) == (3, 10, 5)
    shown = await client.get("/portal/billing?done=1")
    assert '<span id="plan-name">Large</span>' in shown.text
    assert '<meter min="0" max="10" high="10" value="3"' in shown.text


async def test_an_owner_sets_the_pending_days_within_the_api_bounds(client: Client) -> None:
    """PENDING-1: the billing page's ``Pending days`` writes the vendor's setting; out of bounds is
    refused beside the field and changes nothing."""
    shop = await make_shop(client, with_staff=False)
    csrf = await signed_in(client, shop.owner)
    page = await client.get("/portal/billing")
    assert '<label for="pending_days">Pending days</label>' in page.text
    assert 'name="pending_days" type="number" min="0" max="90" required value="0"' in page.text
    for wrong in ("91", "-1", "x", ""):
        refused = await client.post("/portal/billing/pending", data={**keyed(csrf), "pending_days": wrong})
        assert refused.status_code == 422, wrong
        assert 'id="pending_days-problem"' in refused.text
    assert (await admin(client, "GET", f"/admin/v1/vendors/{shop.vendor_id}"))["pending_days"] == 0
    saved = await client.post("/portal/billing/pending", data={**keyed(csrf), "pending_days": "14"})
    assert saved.status_code == 303
    assert saved.headers["location"] == "/portal/billing?done=pending"
    shown = await client.get("/portal/billing?done=pending")
    assert "The pending days are saved." in shown.text
    assert 'required value="14"' in shown.text
    assert (await admin(client, "GET", f"/admin/v1/vendors/{shop.vendor_id}"))["pending_days"] == 14


async def test_a_logo_a_wallet_can_show_is_saved_and_shown_and_any_other_refused(client: Client) -> None:
    """PASS-8: the pass maker's check; a refused upload changes nothing."""
    shop = await make_shop(client, with_staff=False)
    csrf = await signed_in(client, shop.owner)
    fields = {"display_name": "Bakker Bart", "background": "#112233", "foreground": "#FFFFFF"}
    fields["label"] = "#aabbcc"
    refused = await client.post(
        "/portal/branding",
        data={**fields, **keyed(csrf)},
        files={"logo": ("logo.png", b"GIF89a\x01\x00\x01\x00\x00\x00\x00;", "image/png")},
    )
    assert refused.status_code == 422
    assert "Logo image is not a PNG." in refused.text
    branding = await admin(client, "GET", f"/admin/v1/vendors/{shop.vendor_id}/pass-branding")
    assert (branding["background"], branding["has_logo"]) == ("#ffffff", False)

    # a logo of a few hundred KiB is read (the portal's other forms stop at 64 KiB) and judged
    large = b"\x89PNG\r\n\x1a\n" + bytes(300_000)
    judged = await client.post(
        "/portal/branding", data={**fields, **keyed(csrf)}, files={"logo": ("big.png", large, "image/png")}
    )
    assert judged.status_code == 422
    assert "Logo image is a damaged PNG" in judged.text
    too_large = await client.post(
        "/portal/branding", data={**fields, **keyed(csrf)}, files={"logo": ("huge.png", bytes(700_000), "image/png")}
    )
    assert too_large.status_code == 413

    bad_colour = await client.post("/portal/branding", data={**fields, **keyed(csrf), "background": "red"})
    assert bad_colour.status_code == 422
    assert "A colour such as #1d1d1f." in bad_colour.text

    saved = await client.post(
        "/portal/branding", data={**fields, **keyed(csrf)}, files={"logo": ("logo.png", GOOD_PNG, "image/png")}
    )
    assert saved.status_code == 303, saved.text
    branding = await admin(client, "GET", f"/admin/v1/vendors/{shop.vendor_id}/pass-branding")
    assert branding == {
        "shop_name": "Bakker Bart",
        "background": "#112233",
        "foreground": "#ffffff",
        "label": "#aabbcc",
        "has_logo": True,
        "has_icon": False,
    }
    page = await client.get("/portal/branding?done=1")
    assert '<rect x="0" y="0" width="320" height="200" rx="14" fill="#112233"' in page.text
    assert "data:image/png;base64," in page.text

    removed = await client.post("/portal/branding", data={**fields, **keyed(csrf), "remove_logo": "1"})
    assert removed.status_code == 303
    assert (await admin(client, "GET", f"/admin/v1/vendors/{shop.vendor_id}/pass-branding"))["has_logo"] is False


async def test_the_exports_are_exact_csv_with_formula_cells_guarded(client: Client) -> None:
    """INPUT-20: text cells starting with = + - @ gain a leading quote; numbers stay numbers."""
    await set_clock(client, NOW)
    shop = await make_shop(client, with_staff=False)
    made = await register(
        client, shop.tenant, first_name="=HYPERLINK(x)", last_name="@Jansen", email="anna@export.example"
    )
    other = await register(client, shop.tenant, first_name="Bo", external_id="+31-ext")
    for amount, reason, key in ((100, "-welcome", "a"), (-30, "plain", "b")):
        adjusted = await client.post(
            f"/api/v1/customers/{made['id']}/wallet/adjust",
            json={"amount": amount, "reason": reason, "idempotency_key": key},
            headers=shop.tenant.headers,
        )
        assert adjusted.status_code == 201, adjusted.text
    await signed_in(client, shop.owner)

    customers = await client.get("/portal/export/customers.csv")
    assert customers.status_code == 200
    assert customers.headers["content-type"] == "text/csv; charset=utf-8"
    assert customers.headers["content-disposition"] == 'attachment; filename="customers.csv"'
    stamp = "2026-03-01T12:00:00+00:00"
    assert customers.text == (
        "id,external_id,first_name,last_name,email,phone,date_of_birth,status,cards,balance,created_at\r\n"
        f"{made['id']},,'=HYPERLINK(x),'@Jansen,anna@export.example,,,active,{made['loyalty_card_code']},70,{stamp}\r\n"
        f"{other['id']},'+31-ext,Bo,,,,,active,{other['loyalty_card_code']},0,{stamp}\r\n"
    )

    ledger = await client.get("/portal/export/ledger.csv?date_from=2026-03-01&date_to=2026-03-01")
    assert ledger.status_code == 200
    rows = ledger.text.split("\r\n")
    assert rows[0] == "id,customer_id,created_at,type,amount,running_balance,reason,causer_type,causer_id"
    assert [r.split(",", 1)[1] for r in rows[1:-1]] == [
        f"{made['id']},{stamp},adjust,100,100,'-welcome,api_client,{shop.tenant.client_id}",
        f"{made['id']},{stamp},adjust,-30,70,plain,api_client,{shop.tenant.client_id}",
    ]
    later = await client.get("/portal/export/ledger.csv?date_from=2026-03-02")
    assert later.text == rows[0] + "\r\n"
    backwards = await client.get("/portal/export/ledger.csv?date_from=2026-03-02&date_to=2026-03-01")
    assert backwards.status_code == 422
    assert "The last day comes on or after the first." in backwards.text
    unreadable = await client.get("/portal/export/ledger.csv?date_from=yesterday")
    assert unreadable.status_code == 422
    assert "A date such as 2026-12-31." in unreadable.text
