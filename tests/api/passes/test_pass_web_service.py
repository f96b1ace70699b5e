"""platform_a's pass web service and the ``pass-updates`` job through the composed service, with the
wallet push stand-in of test mode (PASS-9 to PASS-18)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from email.utils import parsedate_to_datetime

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from prometheus_client.parser import text_string_to_metric_families

from loyalty_api.adapters.pass_platforms import WalletPasses, wallet_passes
from loyalty_api.app import create_app
from loyalty_api.settings import Settings
from loyalty_wallet_pass.identity import new_rsa_key, private_key_pem
from loyalty_wallet_pass.platform import LocalPassPlatform
from tests.support.app import ADMIN, ADMIN_TOKEN
from tests.support.customers import register
from tests.support.pass_web_service import (
    PUBLIC_URL,
    WEB,
    adjust,
    download,
    pass_json_of,
    pushes,
    register_device,
    run_pass_updates,
    script_push,
)
from tests.support.purchases import buy
from tests.support.tenants import make_tenant

ISSUER_PEM = private_key_pem(new_rsa_key())


@pytest.fixture
def passes(settings: Settings) -> WalletPasses:
    assert settings.encryption_key is not None
    return wallet_passes(settings.encryption_key, ISSUER_PEM, LocalPassPlatform(), public_url=PUBLIC_URL)


@pytest.fixture
async def app_client(settings: Settings, passes: WalletPasses) -> AsyncIterator[AsyncTestClient[Litestar]]:
    own = msgspec.structs.replace(settings, admin_token=ADMIN_TOKEN, worker="external", public_url=PUBLIC_URL)
    async with AsyncTestClient(app=create_app(own, passes=passes)) as client:
        yield client


async def test_a_pass_names_its_web_service_with_one_token_per_pass(app_client: AsyncTestClient[Litestar]) -> None:
    """PASS-9, PASS-10: the pass names the web service under the public URL and a token of at least
    16 characters, the same in every download; another customer's pass has another token."""
    tenant = await make_tenant(app_client)
    ann = await register(app_client, tenant, first_name="Ann")
    bo = await register(app_client, tenant, first_name="Bo")
    first, again, other = (
        await download(app_client, tenant, ann["id"]),
        await download(app_client, tenant, ann["id"]),
        await download(app_client, tenant, bo["id"]),
    )
    assert first.pass_json["webServiceURL"] == f"{PUBLIC_URL}/passes/platform_a"
    assert len(first.token) >= 16
    assert again.token == first.token
    assert again.serial == first.serial == f"v{tenant.vendor_id}-c{ann['id']}"
    assert other.token != first.token
    assert other.serial != first.serial


async def test_register_list_change_push_and_fetch_the_new_pass(app_client: AsyncTestClient[Litestar]) -> None:
    """PASS-11, PASS-12, PASS-14: register 201 then 200; the device lists the pass, then nothing
    since that tag; a change is pushed once on the job's run; the serial is listed since the old tag
    and the latest pass shows the new balance with a later Last-Modified (304 when unchanged)."""
    tenant = await make_tenant(app_client)
    customer = await register(app_client, tenant, first_name="Cas")
    card = await download(app_client, tenant, customer["id"])
    assert (await register_device(app_client, card, "phone-1")).status_code == 201
    assert (await register_device(app_client, card, "phone-1", "push-new")).status_code == 200

    listed = await app_client.get(card.listing("phone-1"))
    assert listed.status_code == 200
    body = listed.json()
    assert body["serialNumbers"] == [card.serial]
    assert set(body) == {"serialNumbers", "lastUpdated"}
    tag = body["lastUpdated"]
    assert isinstance(tag, str)
    assert (await app_client.get(card.listing("phone-1"), params={"passesUpdatedSince": tag})).status_code == 204

    before = await app_client.get(card.latest, headers=card.auth)
    assert before.status_code == 200
    assert before.headers["content-type"] == "application/vnd.apple.pkpass"
    modified = before.headers["last-modified"]
    unchanged = await app_client.get(card.latest, headers={**card.auth, "If-Modified-Since": modified})
    assert unchanged.status_code == 304

    await adjust(app_client, tenant, customer["id"], 40, "cas-1")
    await run_pass_updates(app_client)
    sent = [p for p in await pushes(app_client) if p["serial"] == card.serial]
    assert len(sent) == 1
    assert set(sent[0]) == {"platform", "push_token", "object_id", "serial", "sent_at", "outcome"}
    assert sent[0] | {"sent_at": None} == {
        "platform": "platform_a",
        "push_token": "push-new",
        "object_id": None,
        "serial": card.serial,
        "sent_at": None,
        "outcome": "ok",
    }

    since = await app_client.get(card.listing("phone-1"), params={"passesUpdatedSince": tag})
    assert since.status_code == 200
    assert since.json()["serialNumbers"] == [card.serial]
    assert int(since.json()["lastUpdated"]) > int(tag)

    after = await app_client.get(card.latest, headers={**card.auth, "If-Modified-Since": modified})
    assert after.status_code == 200
    assert parsedate_to_datetime(after.headers["last-modified"]) > parsedate_to_datetime(modified)
    balance = pass_json_of(after.content)["storeCard"]["primaryFields"][0]["value"]
    assert balance == 40


async def test_many_changes_are_one_push_per_device_and_none_without_a_change(
    app_client: AsyncTestClient[Litestar],
) -> None:
    """PASS-13, PASS-14: five changes before a run are one push per registered device; a run with
    nothing changed, and a replayed adjustment, push nothing."""
    tenant = await make_tenant(app_client)
    customer = await register(app_client, tenant, first_name="Dee")
    card = await download(app_client, tenant, customer["id"])
    for device in ("phone-a", "phone-b"):
        assert (await register_device(app_client, card, device)).status_code == 201
    await run_pass_updates(app_client)
    assert [p for p in await pushes(app_client) if p["serial"] == card.serial] == []

    for n in range(5):
        await adjust(app_client, tenant, customer["id"], 10, f"dee-{n}")
    await run_pass_updates(app_client)
    sent = [p["push_token"] for p in await pushes(app_client) if p["serial"] == card.serial]
    assert sorted(sent) == ["push-phone-a", "push-phone-b"]

    await adjust(app_client, tenant, customer["id"], 10, "dee-4")  # a replay changes nothing
    await run_pass_updates(app_client)
    assert len([p for p in await pushes(app_client) if p["serial"] == card.serial]) == 2


async def test_unauthorised_and_unknown_requests(app_client: AsyncTestClient[Litestar]) -> None:
    """PASS-10, PASS-11: 401 without the pass's own token (another shop's pass's included); 404 for
    an unknown serial or a known one under another pass type, whatever the token."""
    shop_a, shop_b = await make_tenant(app_client), await make_tenant(app_client)
    a = await download(app_client, shop_a, (await register(app_client, shop_a))["id"])
    b = await download(app_client, shop_b, (await register(app_client, shop_b))["id"])
    body = {"pushToken": "p"}
    for headers in ({}, {"Authorization": "ApplePass short"}, b.auth, {"Authorization": f"Bearer {a.token}"}):
        assert (await app_client.post(a.registration("d1"), json=body, headers=headers)).status_code == 401
        assert (await app_client.delete(a.registration("d1"), headers=headers)).status_code == 401
        assert (await app_client.get(a.latest, headers=headers)).status_code == 401
    unknown = [
        f"{WEB}/devices/d1/registrations/{a.pass_type}/v{shop_a.vendor_id}-c999999999",
        f"{WEB}/devices/d1/registrations/{b.pass_type}/{a.serial}",
        f"{WEB}/devices/d1/registrations/{a.pass_type}/junk",
        f"{WEB}/devices/d1/registrations/{a.pass_type}/v9999999999999999999-c1",
    ]
    for path in unknown:
        assert (await app_client.post(path, json=body, headers=a.auth)).status_code == 404
        assert (await app_client.delete(path, headers=a.auth)).status_code == 404
    assert (await app_client.get(f"{WEB}/passes/{b.pass_type}/{a.serial}", headers=a.auth)).status_code == 404
    assert (await app_client.post(a.registration("d1"), content=b"{", headers=a.auth)).status_code == 400
    long_device = await app_client.post(a.registration("d" * 256), json=body, headers=a.auth)
    assert long_device.status_code == 400
    long_token = await app_client.post(a.registration("d1"), json={"pushToken": "p" * 256}, headers=a.auth)
    assert long_token.status_code == 400
    assert (await app_client.get(a.listing("d1"))).status_code == 204


async def test_a_gone_device_is_forgotten_and_a_failed_push_waits(app_client: AsyncTestClient[Litestar]) -> None:
    """PASS-15: a push answered gone removes its registration (the device then lists nothing); one
    that failed otherwise is not sent again before its back-off."""
    tenant = await make_tenant(app_client)
    customer = await register(app_client, tenant)
    card = await download(app_client, tenant, customer["id"])
    await register_device(app_client, card, "gone-phone")
    await adjust(app_client, tenant, customer["id"], 5, "g-1")
    await script_push(app_client, "gone")
    assert (await run_pass_updates(app_client))["gone"] == 1
    assert (await app_client.get(card.listing("gone-phone"))).status_code == 204

    await register_device(app_client, card, "slow-phone")
    await adjust(app_client, tenant, customer["id"], 5, "g-2")
    await script_push(app_client, "unavailable")
    assert (await run_pass_updates(app_client))["failed"] == 1
    assert (await run_pass_updates(app_client))["pushed"] == 0
    outcomes = [p["outcome"] for p in await pushes(app_client) if p["serial"] == card.serial]
    assert outcomes == ["gone", "unavailable"]
    assert (await app_client.get(card.listing("slow-phone"))).status_code == 200


async def test_a_saved_platform_b_object_is_updated_once_per_run(app_client: AsyncTestClient[Litestar]) -> None:
    """PASS-16: the object a save link named is updated through the platform's API, once per run."""
    tenant = await make_tenant(app_client)
    customer = await register(app_client, tenant)
    saved = await app_client.get(
        f"/api/v1/customers/{customer['id']}/wallet-pass", params={"platform": "platform_b"}, headers=tenant.headers
    )
    assert saved.status_code == 200
    object_id = f"3388000000022000000.v{tenant.vendor_id}-c{customer['id']}"
    await run_pass_updates(app_client)
    assert [p for p in await pushes(app_client) if p["object_id"] == object_id] == []
    for n in range(3):
        await adjust(app_client, tenant, customer["id"], 7, f"b-{n}")
    await run_pass_updates(app_client)
    await run_pass_updates(app_client)
    sent = [p for p in await pushes(app_client) if p["object_id"] == object_id]
    assert [(p["platform"], p["push_token"], p["serial"], p["outcome"]) for p in sent] == [
        ("platform_b", None, None, "ok")
    ]


async def test_anonymizing_deletes_registrations_and_the_pass_answers_404(
    app_client: AsyncTestClient[Litestar],
) -> None:
    """PASS-17: after anonymization the device lists nothing and every call on the pass is 404."""
    tenant = await make_tenant(app_client)
    customer = await register(app_client, tenant, first_name="Eve")
    card = await download(app_client, tenant, customer["id"])
    await register_device(app_client, card, "eve-phone")
    done = await app_client.post(
        f"/admin/v1/vendors/{tenant.vendor_id}/customers/{customer['id']}/anonymize", headers=ADMIN
    )
    assert done.status_code == 200, done.text
    assert (await app_client.get(card.listing("eve-phone"))).status_code == 204
    assert (await app_client.get(card.latest, headers=card.auth)).status_code == 404
    assert (await register_device(app_client, card, "eve-phone")).status_code == 404


async def test_the_log_answers_200_to_anything(app_client: AsyncTestClient[Litestar]) -> None:
    """PASS-18: the log takes any body and answers 200 with no envelope."""
    for content in (b'{"logs": ["one", "two"]}', b"junk", b'{"logs": [1, {"a": 2}]}', b"[]", b""):
        response = await app_client.post(f"{WEB}/log", content=content)
        assert response.status_code == 200
        assert response.content == b""


def _sample(text: str, name: str, label: str, value: str) -> float:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and sample.labels.get(label) == value:
                return float(sample.value)
    return 0.0


async def test_metrics_count_registrations_by_state_and_pushes_by_outcome(
    app_client: AsyncTestClient[Litestar],
) -> None:
    """PASS-15: /metrics shows a registration whose push failed as retrying, and the failure counted."""
    tenant = await make_tenant(app_client)
    customer = await register(app_client, tenant)
    card = await download(app_client, tenant, customer["id"])
    await register_device(app_client, card, "metered")
    await adjust(app_client, tenant, customer["id"], 3, "m-1")
    before = (await app_client.get("/metrics", headers=ADMIN)).text
    await script_push(app_client, "unavailable")
    await run_pass_updates(app_client)
    after = (await app_client.get("/metrics", headers=ADMIN)).text
    for name, label, value in (
        ("loyalty_pass_registrations", "state", "retrying"),
        ("loyalty_wallet_pushes_total", "outcome", "failed"),
    ):
        assert _sample(after, name, label, value) == _sample(before, name, label, value) + 1, name


async def test_a_branding_change_is_pushed_to_every_pass_of_the_shop(app_client: AsyncTestClient[Litestar]) -> None:
    """PASS-13: the shop's colours are on every pass: a change is one push per registered device."""
    tenant = await make_tenant(app_client)
    cards = [await download(app_client, tenant, (await register(app_client, tenant))["id"]) for _ in range(2)]
    for n, card in enumerate(cards):
        await register_device(app_client, card, f"brand-{n}")
    changed = await app_client.put(
        f"/admin/v1/vendors/{tenant.vendor_id}/pass-branding", json={"background": "#102030"}, headers=ADMIN
    )
    assert changed.status_code == 200, changed.text
    await run_pass_updates(app_client)
    serials = {card.serial for card in cards}
    assert sorted(p["push_token"] for p in await pushes(app_client) if p["serial"] in serials) == [
        "push-brand-0",
        "push-brand-1",
    ]
    latest = await app_client.get(cards[0].latest, headers=cards[0].auth)
    assert pass_json_of(latest.content)["backgroundColor"] == "rgb(16, 32, 48)"


async def test_the_web_service_is_limited_per_address(settings: Settings, passes: WalletPasses) -> None:
    """PASS-11: phones' calls count per address (the allowance without a token), not per vendor."""
    own = msgspec.structs.replace(
        settings, admin_token=ADMIN_TOKEN, worker="external", public_url=PUBLIC_URL, anon_rate_per_minute=3
    )
    async with AsyncTestClient(app=create_app(own, passes=passes)) as client:
        answers = [(await client.post(f"{WEB}/log", content=b"{}")).status_code for _ in range(4)]
    assert answers == [200, 200, 200, 429]


async def test_purchases_move_the_pass_and_a_zero_point_purchase_sends_nothing(
    app_client: AsyncTestClient[Litestar],
) -> None:
    """PASS-13, PASS-14: a purchase through the till changes the pass (one push, the new balance);
    one that earns 0 points changes nothing shown and sends none."""
    tenant = await make_tenant(app_client)
    rule = await app_client.post(
        f"/admin/v1/vendors/{tenant.vendor_id}/earn-rules",
        json={"name": "Euro", "points_per_unit": 1, "unit_amount": 100},
        headers=ADMIN,
    )
    assert rule.status_code == 201, rule.text
    customer = await register(app_client, tenant, first_name="Fay")
    card = await download(app_client, tenant, customer["id"])
    await register_device(app_client, card, "till-phone")
    bought = await buy(app_client, tenant, customer["loyalty_card_code"], 2500)
    assert bought.status_code == 201, bought.text
    await run_pass_updates(app_client)
    assert len([p for p in await pushes(app_client) if p["serial"] == card.serial]) == 1
    latest = await app_client.get(card.latest, headers=card.auth)
    assert pass_json_of(latest.content)["storeCard"]["primaryFields"][0]["value"] == 25

    nothing = await buy(app_client, tenant, customer["loyalty_card_code"], 50)
    assert nothing.status_code == 201, nothing.text
    await run_pass_updates(app_client)
    assert len([p for p in await pushes(app_client) if p["serial"] == card.serial]) == 1
