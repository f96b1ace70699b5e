"""LIABILITY-9: the owners' reports page: the liability table in points and euros, its chart, breakage, the CSV
with the API's figures, the range refused as the API refuses it, and the point value set on the
billing page; staff are refused (LIABILITY-1, LIABILITY-5)."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.customers import register
from tests.support.portal import keyed, make_shop, set_clock, signed_in
from tests.support.tenants import admin

Client = AsyncTestClient[Litestar]
NOW = "2026-03-10T12:00:00Z"
HEADER = (
    "month,opening,earn,redeem,expire,adjust,return,referral,closing,pending_closing,"
    "opening_cents,earn_cents,redeem_cents,expire_cents,adjust_cents,return_cents,referral_cents,"
    "closing_cents,pending_closing_cents"
)


async def test_an_owner_reads_the_liability_report_and_downloads_it(client: Client) -> None:
    """LIABILITY-1, LIABILITY-5: the page, its chart and the CSV hold the API's figures."""
    await set_clock(client, NOW)
    shop = await make_shop(client, with_staff=False)
    customer_id = (await register(client, shop.tenant, first_name="Ann"))["id"]
    for amount, key in ((1234, "a"), (-34, "b")):
        adjusted = await client.post(
            f"/api/v1/customers/{customer_id}/wallet/adjust",
            json={"amount": amount, "reason": "x", "idempotency_key": key},
            headers=shop.tenant.headers,
        )
        assert adjusted.status_code == 201, adjusted.text
    csrf = await signed_in(client, shop.owner)
    billing = await client.get("/portal/billing")
    assert "Point value (millicents)" in billing.text
    refused = await client.post(
        "/portal/billing/point-value", data={**keyed(csrf), "point_value_millicents": "1000001"}
    )
    assert refused.status_code == 422
    assert "A whole number from 0 to 1000000." in refused.text
    saved = await client.post("/portal/billing/point-value", data={**keyed(csrf), "point_value_millicents": "1500"})
    assert saved.status_code == 303
    assert (await admin(client, "GET", f"/admin/v1/vendors/{shop.tenant.vendor_id}"))["point_value_millicents"] == 1500

    page = await client.get("/portal/reports?from=2026-02&to=2026-03")
    assert page.status_code == 200
    assert '<th scope="row">2026-03</th><td>0</td><td>0</td><td>0</td><td>0</td><td>1200</td>' in page.text
    assert "<td>18.00</td>" in page.text  # 1200 points at 1.5 cents
    assert "<svg" in page.text
    assert "2026-03 outstanding: 1200" in page.text
    assert "none earned in this range" in page.text
    assert 'href="/portal/reports/liability.csv?from=2026-02&amp;to=2026-03"' in page.text

    csv = await client.get("/portal/reports/liability.csv?from=2026-02&to=2026-03")
    assert csv.status_code == 200
    assert csv.headers["content-type"].startswith("text/csv")
    assert csv.text == (
        f"{HEADER}\r\n"
        "2026-02,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0\r\n"
        "2026-03,0,0,0,0,1200,0,0,1200,0,0,0,0,0,1800,0,0,1800,0\r\n"
    )
    api = await admin(client, "GET", f"/admin/v1/vendors/{shop.tenant.vendor_id}/liability?from=2026-02&to=2026-03")
    assert [m["closing_cents"] for m in api["months"]] == [0, 1800]

    later = await client.get("/portal/reports?to=2026-04")
    assert later.status_code == 422
    assert "The month may not be later than the current month." in later.text
    bad = await client.get("/portal/reports/liability.csv?from=March")
    assert bad.status_code == 422


async def test_staff_are_refused_the_reports_and_the_point_value(client: Client) -> None:
    shop = await make_shop(client)
    csrf = await signed_in(client, shop.staff)
    for path in ("/portal/reports", "/portal/reports/liability.csv"):
        assert (await client.get(path)).status_code == 403, path
    refused = await client.post("/portal/billing/point-value", data={**keyed(csrf), "point_value_millicents": "5"})
    assert refused.status_code == 403
    assert 'href="/portal/reports"' not in (await client.get("/portal/customers")).text
