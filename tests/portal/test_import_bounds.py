"""PORTAL-9: uploads checked but never imported do not stay on disk: a shop keeps at most
``MAX_WAITING`` of them (a newer check removes the oldest), and the minute's import job removes any
checked more than ``UNIMPORTED_FOR`` ago on the service clock. Queued and imported ones stay."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import AsyncTestClient

from loyalty_api.settings import Settings
from loyalty_core.accounts.jobs.imports import MAX_WAITING
from tests.support.portal import job_of, keyed, make_shop, run_jobs, set_clock, signed_in, upload

FILE = "external_id,first_name\r\nw-1,Wim\r\n"


def files_of(settings: Settings, vendor_id: int) -> int:
    return len(list((settings.home / "imports").glob(f"{vendor_id}-*.csv")))


async def test_a_shop_keeps_at_most_its_allowance_of_unimported_uploads(
    client: AsyncTestClient[Litestar], settings: Settings
) -> None:
    shop = await make_shop(client, with_staff=False)
    csrf = await signed_in(client, shop.owner)
    jobs = []
    for _ in range(MAX_WAITING + 2):
        checked = await upload(client, csrf, FILE)
        assert checked.status_code == 303, checked.text
        jobs.append(await job_of(checked))
    assert files_of(settings, shop.vendor_id) == MAX_WAITING
    for gone in jobs[:2]:
        assert (await client.get(f"/portal/import/{gone}")).status_code == 404
    for kept in jobs[2:]:
        assert (await client.get(f"/portal/import/{kept}")).status_code == 200


async def test_an_upload_never_imported_is_removed_after_a_day_on_the_service_clock(
    client: AsyncTestClient[Litestar], settings: Settings
) -> None:
    shop = await make_shop(client, with_staff=False)
    await set_clock(client, "2032-03-01T09:00:00Z")
    csrf = await signed_in(client, shop.owner)
    waiting = await job_of(await upload(client, csrf, FILE))
    queued = await job_of(await upload(client, csrf, "external_id\r\nq-1\r\n"))
    assert (await client.post(f"/portal/import/{queued}/run", data={**keyed(csrf)})).status_code == 303
    await run_jobs(client)  # imports the queued one, whose file then goes as before
    assert files_of(settings, shop.vendor_id) == 1

    await set_clock(client, "2032-03-02T08:59:00Z")
    await signed_in(client, shop.owner)  # the session's 12 idle hours are over
    await run_jobs(client)
    assert files_of(settings, shop.vendor_id) == 1
    assert (await client.get(f"/portal/import/{waiting}")).status_code == 200

    await set_clock(client, "2032-03-02T09:00:01Z")
    await run_jobs(client)
    assert files_of(settings, shop.vendor_id) == 0
    assert (await client.get(f"/portal/import/{waiting}")).status_code == 404
    assert (await client.get(f"/portal/import/{queued}")).status_code == 200
