"""Merging two accounts of one person: MERGE-1 to MERGE-7; ADJUST-1 for the keys of merged accounts;
one lock order for merges and adjustments."""

from __future__ import annotations

import asyncio

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.app import ADMIN
from tests.support.envelope import error_of
from tests.support.invariants import ledger_violations
from tests.support.merges import adjust, merge, register
from tests.support.racing import racing_client
from tests.support.tenants import make_tenant


async def test_merge_closes_one_account_and_moves_its_points(client: AsyncTestClient[Litestar]) -> None:
    """MERGE-1, MERGE-3: the closed account reads is_deactivated, merged_into_id and balance 0; its cards
    find the kept."""
    tenant = await make_tenant(client)
    closing = await register(client, tenant, email="old@example.com")
    kept = await register(client, tenant, email="new@example.com")
    assert (await adjust(client, tenant, closing["id"], 40, "a")).status_code == 201
    assert (await adjust(client, tenant, kept["id"], 2, "b")).status_code == 201
    response = await merge(client, tenant, closing["id"], kept["id"])
    assert response.status_code == 200
    body = response.json()["data"]
    assert (body["closed"]["is_deactivated"], body["closed"]["merged_into_id"], body["closed"]["balance"]) == (
        True,
        kept["id"],
        0,
    )
    assert (body["kept"]["balance"], body["kept"]["loyalty_card_code"]) == (42, kept["loyalty_card_code"])
    found = await client.get(
        f"/api/v1/customers/lookup?identifier={closing['loyalty_card_code']}", headers=tenant.headers
    )
    assert found.status_code == 200
    assert found.json()["data"]["id"] == kept["id"]
    ledger = (await client.get(f"/api/v1/customers/{kept['id']}/ledger", headers=tenant.headers)).json()["data"]
    assert next((e["type"], e["amount"], e["reason"], e["causer_type"]) for e in ledger["data"]) == (
        "adjust",
        40,
        "merge",
        "portal_user",
    )


async def test_closed_email_stops_resolving_when_the_kept_has_one(client: AsyncTestClient[Litestar]) -> None:
    """MERGE-4."""
    tenant = await make_tenant(client)
    closing = await register(client, tenant, email="first@example.com")
    kept = await register(client, tenant, email="second@example.com")
    await merge(client, tenant, closing["id"], kept["id"])
    response = await client.get("/api/v1/customers/lookup?identifier=first@example.com", headers=tenant.headers)
    assert response.status_code == 404
    assert error_of(response)["code"] == "CUSTOMER_NOT_FOUND"


async def test_closed_external_id_reads_the_closed_account_and_refuses_updates(
    client: AsyncTestClient[Litestar],
) -> None:
    """MERGE-5: a closed account answers 404 EXTERNAL_ID_NOT_FOUND on update by its external_id."""
    tenant = await make_tenant(client)
    closing = await register(client, tenant, external_id="EXT-OLD")
    kept = await register(client, tenant, external_id="EXT-NEW")
    await adjust(client, tenant, closing["id"], 5, "k")
    await merge(client, tenant, closing["id"], kept["id"])
    found = await client.get("/api/v1/customers/lookup?external_id=EXT-OLD", headers=tenant.headers)
    assert found.status_code == 200
    data = found.json()["data"]
    assert (data["id"], data["is_deactivated"], data["balance"]) == (closing["id"], True, 0)
    update = await client.patch(
        "/api/v1/customers/by-external-id/EXT-OLD", json={"first_name": "X"}, headers=tenant.headers
    )
    assert update.status_code == 404
    assert error_of(update)["code"] == "EXTERNAL_ID_NOT_FOUND"


async def test_adjusting_a_closed_account(client: AsyncTestClient[Litestar]) -> None:
    """MERGE-6 and ADJUST-1: a key used before the merge replays; a new key answers CUSTOMER_DEACTIVATED;
    the kept customer finds the closed account's key."""
    tenant = await make_tenant(client)
    closing = await register(client, tenant)
    kept = await register(client, tenant)
    before = await adjust(client, tenant, closing["id"], 9, "pre-merge")
    await merge(client, tenant, closing["id"], kept["id"])
    replay = await adjust(client, tenant, closing["id"], 9, "pre-merge")
    assert replay.status_code == 200
    assert replay.json()["data"] == before.json()["data"]
    refused = await adjust(client, tenant, closing["id"], 1, "post-merge")
    assert refused.status_code == 422
    assert error_of(refused)["code"] == "CUSTOMER_DEACTIVATED"
    via_kept = await adjust(client, tenant, kept["id"], 9, "pre-merge")
    assert via_kept.status_code == 200
    assert via_kept.json()["data"]["wallet_id"] == before.json()["data"]["wallet_id"]
    assert (await adjust(client, tenant, kept["id"], 10, "pre-merge")).status_code == 422


async def test_a_deactivated_account_not_merged_still_takes_adjustments(client: AsyncTestClient[Litestar]) -> None:
    """MERGE-6: a deactivated account that was not merged still takes adjustments."""
    tenant = await make_tenant(client)
    customer = await register(client, tenant)
    response = await client.post(
        f"/admin/v1/vendors/{tenant.vendor_id}/customers/{customer['id']}/deactivate", headers=ADMIN
    )
    assert response.status_code == 200
    assert (await adjust(client, tenant, customer["id"], 3, "k")).status_code == 201


async def test_merge_refusals(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    other = await make_tenant(client)
    one = await register(client, tenant)
    two = await register(client, tenant)
    stranger = await register(client, other)
    itself = await merge(client, tenant, one["id"], one["id"])
    assert itself.status_code == 422
    assert error_of(itself)["details"] == {"into_customer_id": ["The customer to keep must be another customer."]}
    foreign = await merge(client, tenant, one["id"], stranger["id"])
    assert foreign.status_code == 404
    assert error_of(foreign)["code"] == "CUSTOMER_NOT_FOUND"
    assert (await merge(client, tenant, one["id"], two["id"])).status_code == 200
    twice = await merge(client, tenant, one["id"], two["id"])
    assert twice.status_code == 422
    assert error_of(twice)["code"] == "CUSTOMER_DEACTIVATED"
    missing = await client.post(
        f"/admin/v1/vendors/{tenant.vendor_id}/customers/x/merge", json={"into_customer_id": two["id"]}, headers=ADMIN
    )
    assert missing.status_code == 404
    assert error_of(missing)["code"] == "CUSTOMER_NOT_FOUND"


async def test_merges_and_adjustments_racing_never_answer_5xx(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """Lock order: merges and adjustments in opposite lock orders, all at once: no 5xx, LEDGER-1 holds (MERGE-7)."""
    tenant = await make_tenant(client)
    people = [await register(client, tenant) for _ in range(6)]
    for n, person in enumerate(people):
        await adjust(client, tenant, person["id"], 50, f"seed-{n}")
    async with racing_client(engine) as racing:
        calls = []
        for n in range(0, 6, 2):
            a, b = people[n]["id"], people[n + 1]["id"]
            calls += [merge(racing, tenant, a, b), merge(racing, tenant, b, a)]
            calls += [adjust(racing, tenant, a, -1, f"race-a-{n}-{i}") for i in range(5)]
            calls += [adjust(racing, tenant, b, 2, f"race-b-{n}-{i}") for i in range(5)]
        answers = await asyncio.gather(*calls)
    assert all(a.status_code < 500 for a in answers), [a.text for a in answers if a.status_code >= 500]
    async with engine.connect() as conn:
        assert await ledger_violations(conn) == []
    for n in range(0, 6, 2):
        pair = [
            (await client.get(f"/api/v1/customers/{p['id']}/wallet", headers=tenant.headers)).json()["data"]
            for p in people[n : n + 2]
        ]
        assert sum(w["balance"] for w in pair) == 100 - sum(
            1
            for a in answers
            if a.status_code == 201
            and a.json()["data"]["amount"] == -1
            and a.json()["data"]["wallet_id"] in {w["id"] for w in pair}
        ) + 2 * sum(
            1
            for a in answers
            if a.status_code == 201
            and a.json()["data"]["amount"] == 2
            and a.json()["data"]["wallet_id"] in {w["id"] for w in pair}
        )


async def test_closed_email_finds_the_kept_account_when_it_has_none(client: AsyncTestClient[Litestar]) -> None:
    """MERGE-3 read with MERGE-4: what the closed account leaves behind resolves to the account that stays."""
    tenant = await make_tenant(client)
    closing = await register(client, tenant, email="only@example.com")
    kept = await register(client, tenant)
    await merge(client, tenant, closing["id"], kept["id"])
    response = await client.get("/api/v1/customers/lookup?identifier=ONLY@example.com", headers=tenant.headers)
    assert response.status_code == 200
    assert response.json()["data"]["id"] == kept["id"]


async def test_encoded_slash_in_an_external_id_path_reaches_no_customer(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-14: the same holds for customer external_id paths; %2F does not help."""
    tenant = await make_tenant(client)
    await register(client, tenant, external_id="A")
    response = await client.patch(
        "/api/v1/customers/by-external-id/A%2F", json={"first_name": "X"}, headers=tenant.headers
    )
    assert response.status_code == 404
    assert error_of(response)["code"] == "ROUTE_NOT_FOUND"


async def _state(engine: AsyncEngine, ids: list[int]) -> dict[int, tuple[int | None, int]]:
    """customer id -> (merged_into_id, wallet balance)."""
    from sqlalchemy import text

    async with engine.connect() as conn:
        rows = (
            await conn.execute(
                text(
                    "SELECT c.id, c.merged_into_id, w.balance FROM customers c "
                    "JOIN wallets w ON w.vendor_id = c.vendor_id AND w.customer_id = c.id WHERE c.id = ANY(:ids)"
                ),
                {"ids": ids},
            )
        ).all()
    return {r[0]: (r[1], r[2]) for r in rows}


def _merge_outcome_holds(state: dict[int, tuple[int | None, int]]) -> None:
    """MERGE-1: a closed account holds 0 points and is merged into an open one."""
    for merged_into, balance in state.values():
        if merged_into is not None:
            assert balance == 0
            assert state[merged_into][0] is None, "an account is merged into a closed one"


async def test_opposite_merges_racing_exactly_one_succeeds(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """MERGE-7: of A into B racing B into A, exactly one succeeds; the
    other answers 422 CUSTOMER_DEACTIVATED (its closing account is closed) or VALIDATION_ERROR (its kept
    account is closed), decided on rows read under the locks."""
    tenant = await make_tenant(client)
    for round_ in range(5):
        a, b = (await register(client, tenant))["id"], (await register(client, tenant))["id"]
        await adjust(client, tenant, a, 30, f"opp-a-{round_}")
        await adjust(client, tenant, b, 12, f"opp-b-{round_}")
        async with racing_client(engine) as racing:
            answers = await asyncio.gather(merge(racing, tenant, a, b), merge(racing, tenant, b, a))
        assert sorted(r.status_code for r in answers) == [200, 422], [r.text for r in answers]
        refused = next(r for r in answers if r.status_code == 422)
        assert error_of(refused)["code"] in {"CUSTOMER_DEACTIVATED", "VALIDATION_ERROR"}
        state = await _state(engine, [a, b])
        _merge_outcome_holds(state)
        assert sum(balance for _, balance in state.values()) == 42
        assert sum(1 for merged_into, _ in state.values() if merged_into is not None) == 1


async def test_a_chain_of_merges_racing_never_merges_into_a_closed_account(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """A into B racing C into A: if A closes first, C into A is refused (422 VALIDATION_ERROR on
    into_customer_id); if C into A lands first, A into B then carries C's points along."""
    tenant = await make_tenant(client)
    for round_ in range(5):
        a, b, c = [(await register(client, tenant))["id"] for _ in range(3)]
        for person, points in ((a, 5), (b, 7), (c, 11)):
            await adjust(client, tenant, person, points, f"chain-{person}-{round_}")
        async with racing_client(engine) as racing:
            first, second = await asyncio.gather(merge(racing, tenant, a, b), merge(racing, tenant, c, a))
        assert first.status_code == 200, first.text
        if second.status_code != 200:
            assert (second.status_code, error_of(second)["code"]) == (422, "VALIDATION_ERROR")
            assert "into_customer_id" in error_of(second)["details"]
        state = await _state(engine, [a, b, c])
        _merge_outcome_holds(state)
        assert sum(balance for _, balance in state.values()) == 23
    async with engine.connect() as conn:
        assert await ledger_violations(conn) == []


async def test_an_adjustment_racing_a_merge_never_lands_on_the_closed_account(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """MERGE-1, MERGE-7: an adjustment of the closing account that waited for the merge's lock
    is decided on the account as the merge left it (422 CUSTOMER_DEACTIVATED), never credited to it."""
    tenant = await make_tenant(client)
    for round_ in range(5):
        a, b = (await register(client, tenant))["id"], (await register(client, tenant))["id"]
        await adjust(client, tenant, a, 10, f"ram-a-{round_}")
        async with racing_client(engine) as racing:
            answers = await asyncio.gather(
                merge(racing, tenant, a, b), *[adjust(racing, tenant, a, 3, f"ram-{round_}-{i}") for i in range(4)]
            )
        assert answers[0].status_code == 200, answers[0].text
        for late in answers[1:]:
            assert late.status_code in (201, 422), late.text
            if late.status_code == 422:
                assert error_of(late)["code"] == "CUSTOMER_DEACTIVATED"
        credited = 3 * sum(1 for r in answers[1:] if r.status_code == 201)
        state = await _state(engine, [a, b])
        _merge_outcome_holds(state)
        assert state[b][1] == 10 + credited


async def test_merging_an_account_that_others_were_merged_into_carries_them_along(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """C into A, then A into B: C now points at B, so no account stays merged into a closed one, and an
    adjustment key used on C still replays through B (ADJUST-1 over the whole family)."""
    tenant = await make_tenant(client)
    a, b, c = [(await register(client, tenant))["id"] for _ in range(3)]
    first = await adjust(client, tenant, c, 4, "carried-key")
    assert first.status_code == 201
    assert (await merge(client, tenant, c, a)).status_code == 200
    assert (await merge(client, tenant, a, b)).status_code == 200
    state = await _state(engine, [a, b, c])
    assert (state[a][0], state[c][0], state[b]) == (b, b, (None, 4))
    replay = await adjust(client, tenant, b, 4, "carried-key")
    assert (replay.status_code, replay.json()["data"]["id"]) == (200, first.json()["data"]["id"])
