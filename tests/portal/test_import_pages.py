"""The owners' import page over the composed service: the upload streamed to disk behind the form's
token, the dry run, the run on the worker's job with its progress, and a second run of the same file
bringing nothing twice (CUSTOMER-14, CUSTOMER-15)."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.portal import job_of, keyed, make_shop, run_jobs, signed_in, upload

Client = AsyncTestClient[Litestar]
FILE = (
    "external_id,card,email,first_name,opening_points\r\n"
    "old-1,,ann@import.example,Ann,120\r\n"
    ",IMPC0001,,Bo,0\r\n"
    "old-3,,,=Carl,75\r\n"
    ",,,Nobody,5\r\n"
    "old-5,,,,many\r\n"
)


async def test_a_file_is_checked_imported_on_the_worker_and_a_second_run_brings_nothing_twice(
    client: Client, engine: AsyncEngine
) -> None:
    shop = await make_shop(client, with_staff=False)
    csrf = await signed_in(client, shop.owner)
    checked = await upload(client, csrf, FILE)
    assert checked.status_code == 303, checked.text
    job = await job_of(checked)
    page = await client.get(f"/portal/import/{job}")
    assert page.status_code == 200
    assert '<span id="rows-accepted">3</span> rows accepted, <span id="rows-refused">2</span> rows refused' in page.text
    assert "<td>4</td><td>The row needs an external_id or a card.</td>" in page.text
    assert "<td>5</td><td>opening_points is not a whole number from 0 to 2147483647.</td>" in page.text
    async with engine.connect() as conn:
        held = await conn.scalar(text("SELECT count(*) FROM customers WHERE vendor_id = :v"), {"v": shop.vendor_id})
    assert held == 0  # a dry run imports nothing

    queued = await client.post(f"/portal/import/{job}/run", data={**keyed(csrf)})
    assert queued.status_code == 303
    waiting = await client.get(f"/portal/import/{job}")
    assert '<meta http-equiv="refresh" content="2">' in waiting.text
    assert '<span id="import-state" class="status">queued</span>' in waiting.text
    await run_jobs(client)
    done = await client.get(f"/portal/import/{job}")
    assert '<span id="import-state" class="status">done</span>' in done.text
    assert '<progress id="import-progress" max="100" value="100">' in done.text
    assert '<span id="rows-created">3</span> customers imported' in done.text
    assert "http-equiv" not in done.text

    async with engine.connect() as conn:
        rows = (
            await conn.execute(
                text(
                    "SELECT c.external_id, c.first_name, w.balance, e.reason, e.causer_type, e.causer_id "
                    "FROM customers c JOIN wallets w ON w.vendor_id = c.vendor_id AND w.customer_id = c.id "
                    "LEFT JOIN ledger_entries e ON e.vendor_id = w.vendor_id AND e.wallet_id = w.id "
                    "WHERE c.vendor_id = :v ORDER BY c.id"
                ),
                {"v": shop.vendor_id},
            )
        ).all()
    owner = str(shop.owner_id)
    assert [tuple(r) for r in rows] == [
        ("old-1", "Ann", 120, "opening_balance", "import", owner),
        (None, "Bo", 0, None, None, None),
        ("old-3", "=Carl", 75, "opening_balance", "import", owner),
    ]
    found = await client.get("/api/v1/customers/lookup?identifier=IMPC0001", headers=shop.tenant.headers)
    assert found.status_code == 200, found.text
    assert found.json()["data"]["first_name"] == "Bo"

    again = await job_of(await upload(client, csrf, FILE, "again.csv"))
    assert (await client.post(f"/portal/import/{again}/run", data={**keyed(csrf)})).status_code == 303
    await run_jobs(client)
    second = await client.get(f"/portal/import/{again}")
    assert '<span id="rows-created">0</span> customers imported' in second.text
    assert '<span id="rows-held">3</span> already in the shop' in second.text
    async with engine.connect() as conn:
        totals = (
            await conn.execute(
                text(
                    "SELECT (SELECT count(*) FROM customers WHERE vendor_id = :v), "
                    "(SELECT sum(balance) FROM wallets WHERE vendor_id = :v), "
                    "(SELECT count(*) FROM ledger_entries WHERE vendor_id = :v)"
                ),
                {"v": shop.vendor_id},
            )
        ).one()
    assert tuple(totals) == (3, 195, 2)
    # a second Import of a job that ran already runs nothing
    assert (await client.post(f"/portal/import/{job}/run", data={**keyed(csrf)})).status_code == 303
    listing = await client.get("/portal/import")
    assert f'href="/portal/import/{again}"' in listing.text


async def test_an_upload_without_the_sessions_token_first_stores_nothing(client: Client, engine: AsyncEngine) -> None:
    shop = await make_shop(client, with_staff=False)
    csrf = await signed_in(client, shop.owner)
    for sent in ({}, {"csrf_token": csrf + "x"}):
        refused = await client.post("/portal/import", data=sent, files={"file": ("c.csv", FILE.encode(), "text/csv")})
        assert refused.status_code == 403, sent
        assert "This form has expired" in refused.text
    not_a_form = await client.post("/portal/import", data={**keyed(csrf)})
    assert not_a_form.status_code == 400
    empty = await upload(client, csrf, "")
    assert empty.status_code == 422
    unreadable = await upload(client, csrf, "shoe_size\r\n42\r\n")
    assert unreadable.status_code == 422
    assert "Unknown column &#39;shoe_size&#39;" in unreadable.text
    async with engine.connect() as conn:
        jobs = await conn.scalar(
            text("SELECT count(*) FROM customer_imports WHERE vendor_id = :v"), {"v": shop.vendor_id}
        )
    assert jobs == 0


async def test_another_shops_import_answers_404(client: Client, other_client: Client) -> None:
    owner, intruder = await make_shop(client, with_staff=False), await make_shop(client, with_staff=False)
    csrf = await signed_in(other_client, owner.owner)
    job = await job_of(await upload(other_client, csrf, "external_id,first_name\r\nsecret-1,Zebulon\r\n"))
    intruder_csrf = await signed_in(client, intruder.owner)
    for response in (
        await client.get(f"/portal/import/{job}"),
        await client.post(f"/portal/import/{job}/run", data={**keyed(intruder_csrf)}),
    ):
        assert response.status_code == 404
        assert "Zebulon" not in response.text
        assert "secret-1" not in response.text
    assert f"/portal/import/{job}" not in (await client.get("/portal/import")).text
    assert '<span class="status">checked</span>' in (await other_client.get("/portal/import")).text
