"""Card batches in the portal at the HTTP level: what a batch stores, its downloads read back, the
count's bounds, the owners-only pages, and the cards being real free cards at the till."""

from __future__ import annotations

import csv
import io
import re

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from loyalty_portal.exports import safe_cell
from tests.support.customers import card_batch, lookup, register
from tests.support.pdf_labels import label_fonts, labels, qr_of
from tests.support.portal import Shop, keyed, make_shop, signed_in

SHOP_NAME = "Bäckerei (Süd) & Co"


async def generate(client: AsyncTestClient[Litestar], csrf: str, count: str) -> int:
    made = await client.post("/portal/cards", data={**keyed(csrf), "count": count})
    assert made.status_code == 303, made.text
    found = re.fullmatch(r"/portal/cards/(\d+)", made.headers["location"])
    assert found is not None, made.headers["location"]
    return int(found.group(1))


async def batch_codes(engine: AsyncEngine, vendor_id: int, batch_id: int) -> list[str]:
    async with engine.connect() as conn:
        found = await conn.execute(
            text(
                "SELECT value FROM customer_identifiers WHERE vendor_id = :v AND batch_id = :b"
                " AND type = 'loyalty_card' AND active AND customer_id IS NULL ORDER BY id"
            ),
            {"v": vendor_id, "b": batch_id},
        )
        return [row.value for row in found]


async def csv_codes(client: AsyncTestClient[Litestar], batch_id: int) -> list[str]:
    response = await client.get(f"/portal/cards/{batch_id}/csv")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    assert response.headers["content-disposition"] == f'attachment; filename="cards-{batch_id}.csv"'
    rows = list(csv.reader(io.StringIO(response.text)))
    assert rows[0] == ["code"]
    return [row[0] for row in rows[1:]]


@pytest.fixture
async def owner(client: AsyncTestClient[Litestar]) -> tuple[Shop, str]:
    shop = await make_shop(client, name=SHOP_NAME)
    return shop, await signed_in(client, shop.owner)


async def test_a_batch_is_stored_with_its_cards_and_who_made_it(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, owner: tuple[Shop, str]
) -> None:
    """BATCH-1, BATCH-2, BATCH-3: 25 cards fill a sheet of 24 and start a second; both downloads hold
    exactly the batch's codes, the PDF as text and as QR codes, each label with the shop's name and
    its code in the embedded DejaVu Sans Mono."""
    shop, csrf = owner
    batch_id = await generate(client, csrf, " 25 ")
    async with engine.connect() as conn:
        stored = (
            await conn.execute(
                text("SELECT count, created_by_user_id FROM card_batches WHERE vendor_id = :v AND id = :b"),
                {"v": shop.vendor_id, "b": batch_id},
            )
        ).one()
    assert tuple(stored) == (25, shop.owner_id)
    codes = await batch_codes(engine, shop.vendor_id, batch_id)
    assert len(codes) == len(set(codes)) == 25
    assert all(re.fullmatch(r"[A-Z0-9]{8}", code) for code in codes)

    page = await client.get(f"/portal/cards/{batch_id}")
    assert page.status_code == 200
    assert f"Batch {batch_id}" in page.text
    assert f'href="/portal/cards/{batch_id}/pdf"' in page.text
    assert f'href="/portal/cards/{batch_id}/csv"' in page.text
    listed = await client.get("/portal/cards")
    assert listed.status_code == 200
    assert re.search(rf"Batch {batch_id}</a></td>\s*<td>[^<]+</td>\s*<td>{re.escape(shop.owner)}</td>", listed.text)

    assert await csv_codes(client, batch_id) == codes
    pdf = await client.get(f"/portal/cards/{batch_id}/pdf")
    assert pdf.status_code == 200
    assert pdf.headers["content-type"] == "application/pdf"
    assert pdf.headers["content-disposition"] == f'attachment; filename="cards-{batch_id}.pdf"'
    assert pdf.content.startswith(b"%PDF-1.")
    assert pdf.content.rstrip().endswith(b"%%EOF")
    sheets = labels(pdf.content)
    assert [len(sheet) for sheet in sheets] == [24, 1]
    assert [label.code for sheet in sheets for label in sheet] == codes
    for sheet in sheets:
        for label in sheet:
            assert label.modules == qr_of(label.code), label.code
            assert label.shop == SHOP_NAME
    [font] = label_fonts(pdf.content)
    assert re.fullmatch(r"[A-Z]{6}\+DejaVuSansMono\w*\+embedded", font), font


@pytest.mark.parametrize("count", ["0", "10001", "-3", "twelve", ""])
async def test_a_count_out_of_bounds_is_shown_on_the_form(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, owner: tuple[Shop, str], count: str
) -> None:
    """BATCH-1"""
    shop, csrf = owner
    refused = await client.post("/portal/cards", data={**keyed(csrf), "count": count})
    assert refused.status_code == 422
    expected = "This field is required." if count == "" else "A whole number from 1 to 10000."
    assert f'<span class="error" id="count-problem">{expected}</span>' in refused.text
    assert f'value="{count}"' in refused.text
    async with engine.connect() as conn:
        made = await conn.scalar(text("SELECT count(*) FROM card_batches WHERE vendor_id = :v"), {"v": shop.vendor_id})
    assert made == 0


async def test_staff_are_refused_the_cards_pages(client: AsyncTestClient[Litestar], engine: AsyncEngine) -> None:
    shop = await make_shop(client)
    [code] = await card_batch(client, shop.tenant, 1)
    async with engine.connect() as conn:
        batch_id = await conn.scalar(text("SELECT id FROM card_batches WHERE vendor_id = :v"), {"v": shop.vendor_id})
    csrf = await signed_in(client, shop.staff)
    for path in (
        "/portal/cards",
        f"/portal/cards/{batch_id}",
        f"/portal/cards/{batch_id}/pdf",
        f"/portal/cards/{batch_id}/csv",
    ):
        refused = await client.get(path)
        assert refused.status_code == 403, path
        assert code not in refused.text
    posted = await client.post("/portal/cards", data={**keyed(csrf), "count": "5"})
    assert posted.status_code == 403
    assert 'href="/portal/cards"' not in (await client.get("/portal/customers")).text
    async with engine.connect() as conn:
        made = await conn.scalar(text("SELECT count(*) FROM card_batches WHERE vendor_id = :v"), {"v": shop.vendor_id})
    assert made == 1


async def test_generated_cards_are_free_cards_a_till_registers_and_finds(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, owner: tuple[Shop, str]
) -> None:
    """BATCH-1, CUSTOMER-5: a printed card scanned at a registration is assigned to the new customer."""
    shop, csrf = owner
    batch_id = await generate(client, csrf, "2")
    first, second = await batch_codes(engine, shop.vendor_id, batch_id)
    made = await register(client, shop.tenant, identifiers=[{"type": "loyalty_card", "value": first.lower()}])
    assert made["loyalty_card_code"] == first
    found = await lookup(client, shop.tenant, identifier=first)
    assert found.status_code == 200
    assert found.json()["data"]["id"] == made["id"]
    missing = await lookup(client, shop.tenant, identifier=second)  # free: nobody holds it yet
    assert missing.status_code == 404
    assert await batch_codes(engine, shop.vendor_id, batch_id) == [second]
    assert await csv_codes(client, batch_id) == [first, second]  # a reprint still has every card


async def test_the_admin_batch_is_recorded_for_the_operator(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, owner: tuple[Shop, str]
) -> None:
    """BATCH-1: the admin endpoint answers its codes as before and records the batch too."""
    shop, _ = owner
    codes = await card_batch(client, shop.tenant, 3)
    async with engine.connect() as conn:
        batch_id, count, maker = (
            await conn.execute(
                text("SELECT id, count, created_by_user_id FROM card_batches WHERE vendor_id = :v"),
                {"v": shop.vendor_id},
            )
        ).one()
    assert (count, maker) == (3, None)
    assert sorted(await csv_codes(client, batch_id)) == sorted(codes)
    listed = await client.get("/portal/cards")
    assert re.search(rf"Batch {batch_id}</a></td>\s*<td>[^<]+</td>\s*<td>the operator</td>", listed.text)


async def test_ten_thousand_cards_download_as_csv(
    client: AsyncTestClient[Litestar], engine: AsyncEngine, owner: tuple[Shop, str]
) -> None:
    """BATCH-1, BATCH-2: the largest batch, read back in pages."""
    shop, csrf = owner
    batch_id = await generate(client, csrf, "10000")
    codes = await csv_codes(client, batch_id)
    assert len(codes) == len(set(codes)) == 10_000
    assert codes == await batch_codes(engine, shop.vendor_id, batch_id)


def test_csv_cells_a_spreadsheet_would_run_are_prefixed() -> None:
    """BATCH-2, INPUT-20: one guard for every CSV the portal writes."""
    assert [safe_cell(v) for v in ("=1+2", "+31", "-5", "@SUM(B9)", "\t=1", "\r=1", "AB12CD34", "")] == [
        "'=1+2",
        "'+31",
        "'-5",
        "'@SUM(B9)",
        "'\t=1",
        "'\r=1",
        "AB12CD34",
        "",
    ]
