"""The portal's lists (PORTAL-18): a count of the rows ("51–53 of 53") capped at 10,000, previous and
next links that keep the filters and sort of the query string, the customer list's rows and sorts,
and the redemption list's filters; a used redemption's cancel asks why (PORTAL-19); money typed in
euros (PORTAL-17)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_core import listing
from loyalty_core.listing import Paged
from loyalty_portal.paging import page_number, pager_of
from tests.support.customers import register
from tests.support.portal import Shop, keyed, make_shop, signed_in
from tests.support.tenants import admin


def shown(page_text: str) -> str:
    found = re.search(r'<span class="shown">([^<]+)</span>', page_text)
    assert found is not None, page_text
    return found.group(1)


def links(page_text: str, rel: str) -> list[str]:
    return [href.replace("&amp;", "&") for href in re.findall(rf'<a href="([^"]+)" rel="{rel}">', page_text)]


async def customers(client: AsyncTestClient[Litestar], shop: Shop, count: int) -> list[dict[str, object]]:
    made = []
    for n in range(count):
        made.append(
            await register(
                client,
                shop.tenant,
                email=f"c{n}@list{shop.vendor_id}.example",
                first_name=f"C{n:02d}",
                last_name="Lister",
            )
        )
    return made


async def test_the_customer_list_counts_its_rows_and_pages_with_its_filters_kept(
    client: AsyncTestClient[Litestar],
) -> None:
    shop = await make_shop(client, with_staff=False)
    made = await customers(client, shop, 53)
    await signed_in(client, shop.owner)
    first = await client.get("/portal/customers?status=active&sort=name")
    assert first.status_code == 200
    assert shown(first.text) == "1–50 of 53"
    assert links(first.text, "prev") == []
    assert links(first.text, "next") == ["/portal/customers?status=active&sort=name&page=2"] * 2
    second = await client.get("/portal/customers?status=active&sort=name&page=2")
    assert shown(second.text) == "51–53 of 53"
    assert links(second.text, "next") == []
    assert links(second.text, "prev") == ["/portal/customers?status=active&sort=name"] * 2
    rows = re.findall(r'<a href="/portal/customers/(\d+)">([^<]+)</a></td>\s*<td>([^<]*)</td>', second.text)
    assert rows == [
        (str(c["id"]), f"C{n} Lister", c["loyalty_card_code"]) for n, c in zip((50, 51, 52), made[50:], strict=True)
    ]
    past = await client.get("/portal/customers?status=active&sort=name&page=9")
    assert shown(past.text) == "0 of 53"
    assert "No customers match" in past.text


async def test_the_customer_list_sorts_by_balance_and_shows_it(client: AsyncTestClient[Litestar]) -> None:
    shop = await make_shop(client, with_staff=False)
    made = await customers(client, shop, 3)
    for c, points in zip(made, (5, 40, 12), strict=True):
        moved = await client.post(
            f"/api/v1/customers/{c['id']}/wallet/adjust",
            json={"amount": points, "reason": "seed", "idempotency_key": f"seed-{c['id']}"},
            headers=shop.tenant.headers,
        )
        assert moved.status_code == 201, moved.text
    await signed_in(client, shop.owner)
    page = await client.get("/portal/customers?sort=balance")
    balances = re.findall(r'<td class="number">(\d+)</td>', page.text)
    assert balances == ["40", "12", "5"]
    newest = await client.get("/portal/customers")
    assert re.findall(r'<td class="number">(\d+)</td>', newest.text) == ["12", "40", "5"]


async def test_a_count_stops_at_the_cap_and_says_so(
    client: AsyncTestClient[Litestar], monkeypatch: pytest.MonkeyPatch
) -> None:
    shop = await make_shop(client, with_staff=False)
    await customers(client, shop, 4)
    await signed_in(client, shop.owner)
    monkeypatch.setattr(listing, "COUNT_CAP", 3)
    page = await client.get("/portal/customers?sort=oldest")
    assert shown(page.text) == "1–3 of 3+"
    assert links(page.text, "next") == []
    assert "Narrow the filter to reach rows past the first 3." in page.text
    assert len(re.findall(r'<a href="/portal/customers/\d+">', page.text)) == 3


async def test_a_name_search_counts_and_pages_to_its_own_lower_cap(
    client: AsyncTestClient[Litestar], monkeypatch: pytest.MonkeyPatch
) -> None:
    """INPUT-23: a search by part of a name stops counting and paging at its own cap, while the
    whole list still counts to the general one."""
    shop = await make_shop(client, with_staff=False)
    await customers(client, shop, 4)
    await signed_in(client, shop.owner)
    monkeypatch.setattr(listing, "NAME_COUNT_CAP", 2)
    page = await client.get("/portal/customers?sort=oldest&q=lister")
    assert shown(page.text) == "1–2 of 2+"
    assert links(page.text, "next") == []
    assert "Narrow the filter to reach rows past the first 2." in page.text
    assert len(re.findall(r'<a href="/portal/customers/\d+">', page.text)) == 2
    assert shown((await client.get("/portal/customers?sort=oldest")).text) == "1–4 of 4"


def test_a_pager_keeps_the_query_and_names_its_page() -> None:
    found: Paged[int] = Paged(list(range(20)), 2, 20, 45, False)
    pager = pager_of(found, "/portal/customers/7", {"purchases_page": "3", "ledger_page": "2"}, name="ledger_page")
    assert (pager.shown, pager.previous, pager.next) == (
        "21–40 of 45",
        "/portal/customers/7?purchases_page=3",
        "/portal/customers/7?purchases_page=3&ledger_page=3",
    )
    assert [page_number(raw) for raw in ("", "0", "-2", "x", "²", "3")] == [1, 1, 1, 1, 1, 3]


async def redeemed(client: AsyncTestClient[Litestar], shop: Shop, email: str, reward_id: int, key: str) -> str:
    made = await client.post(
        "/api/v1/redemptions",
        json={"identifier": email, "reward_id": reward_id, "idempotency_key": key},
        headers=shop.tenant.headers,
    )
    assert made.status_code == 201, made.text
    return str(made.json()["data"]["confirmation_code"])


async def test_the_redemption_list_filters_by_status_branch_and_day(client: AsyncTestClient[Litestar]) -> None:
    shop = await make_shop(client, with_staff=False)
    v = f"/admin/v1/vendors/{shop.vendor_id}"
    await admin(client, "POST", f"{v}/branches", {"external_id": "north", "name": "North"})
    [c] = await customers(client, shop, 1)
    await client.post(
        f"/api/v1/customers/{c['id']}/wallet/adjust",
        json={"amount": 100, "reason": "seed", "idempotency_key": "seed"},
        headers=shop.tenant.headers,
    )
    reward = await admin(client, "POST", f"{v}/rewards", {"type": "free_product", "name": "Tea", "point_cost": 10})
    valid, used = [await redeemed(client, shop, str(c["email"]), reward["id"], key) for key in ("a", "b")]
    verified = await client.post(f"/api/v1/redemptions/{used}/verify", headers=shop.tenant.headers)
    assert verified.status_code == 200, verified.text
    await signed_in(client, shop.owner)

    def codes(page_text: str) -> list[str]:
        return re.findall(r'<td><a href="/portal/redemptions/([A-Z0-9-]+)">', page_text)

    every = await client.get("/portal/redemptions")
    assert (every.status_code, codes(every.text), shown(every.text)) == (200, [used, valid], "1–2 of 2")
    assert 'href="/portal/customers/' in every.text
    assert "C00 Lister" in every.text
    assert codes((await client.get("/portal/redemptions?status=used")).text) == [used]
    assert codes((await client.get("/portal/redemptions?status=valid&sort=oldest")).text) == [valid]
    today = datetime.now(UTC).date().isoformat()
    assert codes((await client.get(f"/portal/redemptions?day={today}&sort=oldest")).text) == [valid, used]
    assert codes((await client.get("/portal/redemptions?day=2001-01-01")).text) == []
    assert codes((await client.get("/portal/redemptions?branch=north")).text) == []
    refused_day = await client.get("/portal/redemptions?day=yesterday")
    assert refused_day.status_code == 200
    assert "A date such as 2026-12-31; showing every day." in refused_day.text
    assert codes(refused_day.text) == [used, valid]


async def test_cancelling_a_used_redemption_says_it_was_handed_over_and_asks_why(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    shop = await make_shop(client, with_staff=False)
    v = f"/admin/v1/vendors/{shop.vendor_id}"
    [c] = await customers(client, shop, 1)
    await client.post(
        f"/api/v1/customers/{c['id']}/wallet/adjust",
        json={"amount": 100, "reason": "seed", "idempotency_key": "seed"},
        headers=shop.tenant.headers,
    )
    reward = await admin(client, "POST", f"{v}/rewards", {"type": "free_product", "name": "Tea", "point_cost": 30})
    code = await redeemed(client, shop, str(c["email"]), reward["id"], "tea")
    assert (await client.post(f"/api/v1/redemptions/{code}/verify", headers=shop.tenant.headers)).status_code == 200
    csrf = await signed_in(client, shop.owner)
    confirm = await client.get(f"/portal/redemptions/{code}/cancel")
    assert "The reward was already handed over to the customer on " in confirm.text
    assert '<textarea id="reason" name="reason" maxlength="400" required' in confirm.text
    refused = await client.post(f"/portal/redemptions/{code}/cancel", data={**keyed(csrf), "reason": "  "})
    assert refused.status_code == 422
    assert '<span class="error" id="reason-problem">This field is required.</span>' in refused.text
    async with engine.connect() as conn:
        assert (
            await conn.scalar(text("SELECT status FROM redemptions WHERE confirmation_code = :c"), {"c": code})
            == "used"
        )
    done = await client.post(
        f"/portal/redemptions/{code}/cancel", data={**keyed(csrf), "reason": "Wrong customer at the till"}
    )
    assert (done.status_code, done.headers["location"]) == (303, f"/portal/redemptions/{code}?done=cancelled")
    async with engine.connect() as conn:
        entry = (
            await conn.execute(
                text(
                    "SELECT amount, reason, causer_type, causer_id FROM ledger_entries"
                    " WHERE vendor_id = :v AND reason LIKE 'redemption_cancelled%'"
                ),
                {"v": shop.vendor_id},
            )
        ).one()
        assert (
            await conn.scalar(text("SELECT status FROM redemptions WHERE confirmation_code = :c"), {"c": code})
            == "cancelled"
        )
    assert tuple(entry) == (30, "redemption_cancelled: Wrong customer at the till", "portal_user", str(shop.owner_id))


@pytest.mark.parametrize(
    ("typed", "problem"),
    [
        ("12.505", "An amount in euros such as 12.50, with at most two decimals."),
        ("١٢", "An amount in euros such as 12.50, with at most two decimals."),
        ("-1", "An amount in euros such as 12.50, with at most two decimals."),
        ("0", "An amount from €0.01 to €21474836.47."),
    ],
)
async def test_an_amount_the_form_cannot_take_in_euros_is_refused_beside_its_field(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, typed: str, problem: str
) -> None:
    shop = await make_shop(client, with_staff=False)
    csrf = await signed_in(client, shop.owner)
    form = {**keyed(csrf), "name": "Per euro", "points_per_unit": "1", "unit_amount": typed}
    refused = await client.post("/portal/earn-rules", data=form)
    assert refused.status_code == 422
    assert f'<span class="error" id="unit_amount-problem">{problem}</span>' in refused.text
    async with engine.connect() as conn:
        assert (
            await conn.scalar(text("SELECT count(*) FROM earn_rules WHERE vendor_id = :v"), {"v": shop.vendor_id}) == 0
        )


async def test_an_amount_typed_in_euros_is_stored_in_cents_and_shown_in_euros(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    shop = await make_shop(client, with_staff=False)
    csrf = await signed_in(client, shop.owner)
    form = {
        **keyed(csrf),
        "name": "Per euro",
        "points_per_unit": "1",
        "unit_amount": "2,5",
        "min_transaction_amount": "10",
    }
    made = await client.post("/portal/earn-rules", data=form)
    assert made.status_code == 303, made.text
    async with engine.connect() as conn:
        stored = (
            await conn.execute(
                text("SELECT id, unit_amount, min_transaction_amount FROM earn_rules WHERE vendor_id = :v"),
                {"v": shop.vendor_id},
            )
        ).one()
    assert tuple(stored)[1:] == (250, 1000)
    listed = await client.get("/portal/earn-rules")
    assert '<td class="number">€2.50</td>' in listed.text
    assert '<td class="number">€10.00</td>' in listed.text
    edit = await client.get(f"/portal/earn-rules/{stored[0]}")
    assert 'name="unit_amount" inputmode="decimal" required value="2.50"' in edit.text
    assert "Unit amount (€)" in edit.text
    assert "Minimum purchase (€)" in edit.text


async def test_a_customers_ledger_pages_under_its_own_name_keeping_the_purchases_page(
    client: AsyncTestClient[Litestar],
) -> None:
    shop = await make_shop(client, with_staff=False)
    [c] = await customers(client, shop, 1)
    for n in range(23):
        moved = await client.post(
            f"/api/v1/customers/{c['id']}/wallet/adjust",
            json={"amount": n + 1, "reason": f"visit {n}", "idempotency_key": f"visit-{n}"},
            headers=shop.tenant.headers,
        )
        assert moved.status_code == 201, moved.text
    await signed_in(client, shop.owner)
    first = await client.get(f"/portal/customers/{c['id']}?purchases_page=2")
    ledger = re.search(r'aria-label="Ledger pages">\s*<span class="shown">([^<]+)</span>', first.text)
    assert ledger is not None
    assert ledger.group(1) == "1–20 of 23"
    assert links(first.text, "next") == [f"/portal/customers/{c['id']}?purchases_page=2&ledger_page=2"]
    second = await client.get(f"/portal/customers/{c['id']}?purchases_page=2&ledger_page=2")
    assert "21–23 of 23" in second.text
    assert re.findall(r"<td>(visit \d+)</td>", second.text) == ["visit 2", "visit 1", "visit 0"]
