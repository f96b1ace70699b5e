"""The portal as its tests drive it: a shop with an owner and a staff member, signing in through the
form (its CSRF token read from the page), and reading the session cookie's attributes."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

from httpx import Response
from litestar import Litestar
from litestar.testing import AsyncTestClient

from loyalty_core.staff.services.form_keys import mint
from tests.support.app import ADMIN
from tests.support.tenants import Tenant, admin, make_tenant

PASSWORD = "a long enough password"
COOKIE = "loyalty_portal_session"
_n = itertools.count()


@dataclass(frozen=True)
class Shop:
    tenant: Tenant
    owner: str
    staff: str
    owner_id: int
    staff_id: int

    @property
    def vendor_id(self) -> int:
        return self.tenant.vendor_id


def unique_email(what: str) -> str:
    return f"{what}{next(_n)}@shop{next(_n)}.example"


async def make_shop(client: AsyncTestClient[Litestar], *, with_staff: bool = True, **vendor: Any) -> Shop:
    """A shop with an owner and (unless told otherwise: each user costs an argon2id hash) a staff member."""
    tenant = await make_tenant(client, vendor=vendor or None)
    owner, staff = unique_email("owner"), unique_email("staff")
    users = f"/admin/v1/vendors/{tenant.vendor_id}/users"
    made_owner = await admin(client, "POST", users, {"email": owner, "role": "owner", "password": PASSWORD})
    staff_id = 0
    if with_staff:
        staff_id = (await admin(client, "POST", users, {"email": staff, "role": "staff", "password": PASSWORD}))["id"]
    return Shop(tenant, owner, staff, made_owner["id"], staff_id)


def csrf_of(page: Response) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert found is not None, page.text
    return found.group(1)


def keyed(csrf: str) -> dict[str, str]:
    """The hidden fields of a form as a page renders them: the session's CSRF token and a new
    one-time key minted for the session (PORTAL-21), so each call is a new form."""
    return {"csrf_token": csrf, "form_key": mint(csrf)}


async def sign_in(client: AsyncTestClient[Litestar], email: str, password: str = PASSWORD) -> Response:
    """The sign-in form filled in as a browser does: the form first (its session and token)."""
    form = await client.get("/portal/login")
    token = csrf_of(form)
    return await client.post("/portal/login", data={"email": email, "password": password, "csrf_token": token})


def session_cookie(response: Response) -> str:
    """The ``Set-Cookie`` header of the session cookie, as sent."""
    [header] = [h for h in response.headers.get_list("set-cookie") if h.startswith(f"{COOKIE}=")]
    return header


async def signed_in(client: AsyncTestClient[Litestar], email: str) -> str:
    """Sign ``client`` in; answers the CSRF token of the signed-in session."""
    response = await sign_in(client, email)
    assert response.status_code == 303, response.text
    assert response.headers["location"] == "/portal"
    return csrf_of(await client.get("/portal/customers"))


async def set_clock(client: AsyncTestClient[Litestar], now: str) -> None:
    response = await client.put("/admin/v1/test-clock", json={"now": now}, headers=ADMIN)
    assert response.status_code == 200, response.text


# the owners' import page: a file sent through the form, the worker's job run, the job a check made
async def upload(client: AsyncTestClient[Litestar], csrf: str, content: str, name: str = "customers.csv") -> Response:
    return await client.post(
        "/portal/import", data={**keyed(csrf)}, files={"file": (name, content.encode(), "text/csv")}
    )


async def run_jobs(client: AsyncTestClient[Litestar]) -> None:
    ran = await client.post("/admin/v1/jobs/customer-imports/run", headers=ADMIN)
    assert ran.status_code == 200, ran.text


async def job_of(response: Response) -> str:
    location = response.headers["location"]
    found = re.fullmatch(r"/portal/import/(\d+)", location)
    assert found is not None, location
    return found.group(1)
