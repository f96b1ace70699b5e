"""Admin API for a shop's portal users: emails unique in the deployment, argon2id hashes, and
changes that end the user's sessions."""

from __future__ import annotations

import asyncio
import itertools

from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.support.app import ADMIN
from tests.support.envelope import error_of
from tests.support.racing import racing_client
from tests.support.tenants import make_tenant

PASSWORD = "correct horse battery"
_n = itertools.count()


def email() -> str:
    return f"User{next(_n)}.admin-test@Example.org"


async def test_user_is_created_with_a_lowercased_email_and_an_argon2id_hash(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    tenant = await make_tenant(client)
    address = email()
    response = await client.post(
        f"/admin/v1/vendors/{tenant.vendor_id}/users",
        json={"email": address, "role": "owner", "password": PASSWORD},
        headers=ADMIN,
    )
    assert response.status_code == 201
    data = response.json()["data"]
    assert set(data) == {"id", "email", "role", "active", "created_at"}
    assert (data["email"], data["role"], data["active"]) == (address.lower(), "owner", True)
    async with engine.connect() as conn:
        stored = (await conn.execute(text("SELECT password_hash FROM users WHERE id = :i"), {"i": data["id"]})).one()
    assert stored.password_hash.startswith("$argon2id$")
    assert PASSWORD not in stored.password_hash


async def test_an_email_belongs_to_one_user_in_the_deployment(client: AsyncTestClient[Litestar]) -> None:
    first, second = await make_tenant(client), await make_tenant(client)
    address = email()
    made = await client.post(
        f"/admin/v1/vendors/{first.vendor_id}/users",
        json={"email": address, "role": "owner", "password": PASSWORD},
        headers=ADMIN,
    )
    assert made.status_code == 201
    again = await client.post(
        f"/admin/v1/vendors/{second.vendor_id}/users",
        json={"email": address.upper(), "role": "staff", "password": PASSWORD},
        headers=ADMIN,
    )
    assert again.status_code == 409
    assert error_of(again)["code"] == "USER_EMAIL_DUPLICATE"


async def test_short_password_and_unknown_role_are_refused(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    short = await client.post(
        f"/admin/v1/vendors/{tenant.vendor_id}/users",
        json={"email": email(), "role": "owner", "password": "elevenchars"},
        headers=ADMIN,
    )
    assert short.status_code == 422
    assert error_of(short)["code"] == "VALIDATION_ERROR"
    assert list(error_of(short)["details"]) == ["password"]
    role = await client.post(
        f"/admin/v1/vendors/{tenant.vendor_id}/users",
        json={"email": email(), "role": "boss", "password": PASSWORD},
        headers=ADMIN,
    )
    assert role.status_code == 422
    assert list(error_of(role)["details"]) == ["role"]


async def test_users_are_listed_per_vendor_and_changed(client: AsyncTestClient[Litestar]) -> None:
    tenant, other = await make_tenant(client), await make_tenant(client)
    base = f"/admin/v1/vendors/{tenant.vendor_id}/users"
    made = (
        await client.post(base, json={"email": email(), "role": "staff", "password": PASSWORD}, headers=ADMIN)
    ).json()
    await client.post(
        f"/admin/v1/vendors/{other.vendor_id}/users",
        json={"email": email(), "role": "owner", "password": PASSWORD},
        headers=ADMIN,
    )
    listed = await client.get(base, headers=ADMIN)
    assert listed.status_code == 200
    page = listed.json()["data"]
    assert [u["id"] for u in page["data"]] == [made["data"]["id"]]
    assert page["meta"]["total"] == 1
    changed = await client.patch(f"{base}/{made['data']['id']}", json={"role": "owner", "active": False}, headers=ADMIN)
    assert changed.status_code == 200
    assert (changed.json()["data"]["role"], changed.json()["data"]["active"]) == ("owner", False)


async def test_another_vendors_user_is_not_found(client: AsyncTestClient[Litestar]) -> None:
    tenant, other = await make_tenant(client), await make_tenant(client)
    made = await client.post(
        f"/admin/v1/vendors/{tenant.vendor_id}/users",
        json={"email": email(), "role": "staff", "password": PASSWORD},
        headers=ADMIN,
    )
    user_id = made.json()["data"]["id"]
    for raw in (str(user_id), "not-a-number"):
        response = await client.patch(
            f"/admin/v1/vendors/{other.vendor_id}/users/{raw}", json={"active": False}, headers=ADMIN
        )
        assert response.status_code == 404
        assert error_of(response)["code"] == "USER_NOT_FOUND"
    short = await client.patch(
        f"/admin/v1/vendors/{tenant.vendor_id}/users/{user_id}", json={"password": "short"}, headers=ADMIN
    )
    assert short.status_code == 422
    assert list(error_of(short)["details"]) == ["password"]


async def test_users_of_an_unknown_vendor_are_refused(client: AsyncTestClient[Litestar]) -> None:
    response = await client.post(
        "/admin/v1/vendors/999999999/users",
        json={"email": email(), "role": "owner", "password": PASSWORD},
        headers=ADMIN,
    )
    assert response.status_code == 404
    assert error_of(response)["code"] == "VENDOR_NOT_FOUND"


async def _user(client: AsyncTestClient[Litestar], vendor_id: int, role: str) -> int:
    made = await client.post(
        f"/admin/v1/vendors/{vendor_id}/users",
        json={"email": email(), "role": role, "password": PASSWORD},
        headers=ADMIN,
    )
    assert made.status_code == 201, made.text
    user_id: int = made.json()["data"]["id"]
    return user_id


async def _owners(engine: AsyncEngine, vendor_id: int) -> list[int]:
    async with engine.connect() as conn:
        found = await conn.execute(
            text("SELECT id FROM users WHERE vendor_id = :v AND role = 'owner' AND active ORDER BY id"),
            {"v": vendor_id},
        )
        return [row.id for row in found]


async def test_the_last_active_owner_is_neither_demoted_nor_deactivated(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """STAFF-1: the refusal names the field that would leave the shop without an owner."""
    tenant = await make_tenant(client)
    owner = await _user(client, tenant.vendor_id, "owner")
    retired = await _user(client, tenant.vendor_id, "owner")
    base = f"/admin/v1/vendors/{tenant.vendor_id}/users"
    assert (await client.patch(f"{base}/{retired}", json={"active": False}, headers=ADMIN)).status_code == 200
    for body, fields in (
        ({"role": "staff"}, ["role"]),
        ({"active": False}, ["active"]),
        ({"role": "staff", "active": False, "password": "another long password"}, ["role", "active"]),
    ):
        refused = await client.patch(f"{base}/{owner}", json=body, headers=ADMIN)
        assert refused.status_code == 422, body
        assert error_of(refused)["code"] == "VALIDATION_ERROR"
        assert sorted(error_of(refused)["details"]) == sorted(fields)
    assert await _owners(engine, tenant.vendor_id) == [owner]
    # what leaves the owner an active owner stays allowed
    kept = await client.patch(
        f"{base}/{owner}", json={"role": "owner", "active": True, "password": "a new long password"}, headers=ADMIN
    )
    assert kept.status_code == 200
    assert (kept.json()["data"]["role"], kept.json()["data"]["active"]) == ("owner", True)
    # an inactive owner is no owner to keep: demoting them is allowed
    assert (await client.patch(f"{base}/{retired}", json={"role": "staff"}, headers=ADMIN)).status_code == 200


async def test_an_owner_is_demoted_or_deactivated_while_another_active_owner_remains(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """STAFF-1"""
    tenant = await make_tenant(client)
    first, second, third = [await _user(client, tenant.vendor_id, "owner") for _ in range(3)]
    base = f"/admin/v1/vendors/{tenant.vendor_id}/users"
    demoted = await client.patch(f"{base}/{first}", json={"role": "staff"}, headers=ADMIN)
    assert demoted.status_code == 200
    assert demoted.json()["data"]["role"] == "staff"
    deactivated = await client.patch(f"{base}/{second}", json={"active": False}, headers=ADMIN)
    assert deactivated.status_code == 200
    assert deactivated.json()["data"]["active"] is False
    assert await _owners(engine, tenant.vendor_id) == [third]
    refused = await client.patch(f"{base}/{third}", json={"active": False}, headers=ADMIN)
    assert refused.status_code == 422
    assert list(error_of(refused)["details"]) == ["active"]


async def test_two_owners_demoted_at_once_leave_one_owner(
    client: AsyncTestClient[Litestar], engine: AsyncEngine
) -> None:
    """STAFF-1: the owners' rows are locked before either change, so the second demotion sees the
    first and is refused."""
    for _ in range(3):
        tenant = await make_tenant(client)
        owners = [await _user(client, tenant.vendor_id, "owner") for _ in range(2)]
        base = f"/admin/v1/vendors/{tenant.vendor_id}/users"
        async with racing_client(engine) as racing:
            answers = await asyncio.gather(
                racing.patch(f"{base}/{owners[0]}", json={"role": "staff"}, headers=ADMIN),
                racing.patch(f"{base}/{owners[1]}", json={"active": False}, headers=ADMIN),
            )
        assert sorted(a.status_code for a in answers) == [200, 422]
        assert len(await _owners(engine, tenant.vendor_id)) == 1
