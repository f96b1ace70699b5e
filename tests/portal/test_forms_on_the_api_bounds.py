"""A portal form checks its fields by the API's own declaration of each bound and reads numbers by the
API's rule, so a value the admin API refuses the form refuses, and one it takes the form takes."""

from __future__ import annotations

import typing
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from loyalty_core import bounds
from loyalty_http.admin.tenancy_schemas import BranchCreate, ClientCreate, VendorCreate, VendorPatch
from loyalty_http.admin.users_schemas import UserCreate
from loyalty_http.customers.admin_schemas import CardBatchCreate, CustomerSearchQuery
from loyalty_http.earning.purchase_schemas import ItemBody, PreviewBody
from loyalty_http.passes.schemas import BrandingBody
from loyalty_http.rewards.schemas import RewardCreate
from loyalty_http.wallet.schemas import WalletAdjust
from tests.support.app import ADMIN
from tests.support.customers import register
from tests.support.portal import keyed, make_shop, signed_in


def _metas(struct: type[msgspec.Struct], field: str) -> list[object]:
    """The ``msgspec.Meta`` objects a struct's field is annotated with, through ``X | None`` unions."""
    found: list[object] = []
    stack: list[Any] = [typing.get_type_hints(struct, include_extras=True)[field]]
    while stack:
        hint = stack.pop()
        if typing.get_origin(hint) is typing.Annotated:
            found.extend(a for a in hint.__metadata__ if isinstance(a, msgspec.Meta))
        stack.extend(typing.get_args(hint))
    return found


@pytest.mark.parametrize(
    ("struct", "field", "bound"),
    [
        (RewardCreate, "name", bounds.REWARD_NAME),
        (RewardCreate, "description", bounds.REWARD_DESCRIPTION),
        (RewardCreate, "point_cost", bounds.POSITIVE),
        (RewardCreate, "total_stock", bounds.COUNT),
        (RewardCreate, "discount_value", bounds.POSITIVE),
        (WalletAdjust, "reason", bounds.ADJUST_REASON),
        (WalletAdjust, "idempotency_key", bounds.ADJUST_KEY),
        (CustomerSearchQuery, "q", bounds.CUSTOMER_SEARCH),
        (CardBatchCreate, "count", bounds.CARD_BATCH_COUNT),
        (ItemBody, "quantity", bounds.ITEM_QUANTITY),
        (ItemBody, "sku", bounds.ITEM_TEXT),
        (PreviewBody, "total_amount", bounds.TOTAL_AMOUNT),
        (PreviewBody, "branch", bounds.BRANCH_KEY),
        (BranchCreate, "external_id", bounds.BRANCH_KEY),
        (BranchCreate, "name", bounds.ADMIN_NAME),
        (BranchCreate, "type", bounds.BRANCH_TYPE),
        (ClientCreate, "name", bounds.ADMIN_NAME),
        (ClientCreate, "default_branch", bounds.BRANCH_KEY),
        (UserCreate, "email", bounds.USER_EMAIL),
        (UserCreate, "password", bounds.PASSWORD),
        (BrandingBody, "display_name", bounds.DISPLAY_NAME),
        (BrandingBody, "background", bounds.COLOUR),
        (VendorPatch, "point_value_millicents", bounds.POINT_VALUE),
        (VendorPatch, "pending_days", bounds.PENDING_DAYS),
        (VendorCreate, "pending_days", bounds.PENDING_DAYS),
    ],
)
def test_the_api_field_a_portal_form_mirrors_reads_the_same_declaration(
    struct: type[msgspec.Struct], field: str, bound: msgspec.Meta
) -> None:
    """PORTAL-2: one declaration per bound, read by the API's struct and the portal's form alike.
    (Compared by value: ``typing`` caches ``Annotated`` forms, so an equal Meta written elsewhere may
    stand in for the declared object.)"""
    assert bound in _metas(struct, field), _metas(struct, field)


POINT_COSTS = ["0", "1", "+7", "007", "-3", "2147483647", "2147483648", "9" * 400, "1.5", "1e3", "²", "seven"]


async def test_a_reward_form_takes_exactly_the_point_costs_the_admin_api_takes(
    client: AsyncTestClient[Litestar],
) -> None:
    """PORTAL-2, INPUT-10: the same text for ``point_cost``, accepted or refused by both alike."""
    shop = await make_shop(client, with_staff=False)
    csrf = await signed_in(client, shop.owner)
    verdicts = []
    for cost in POINT_COSTS:
        body = {"type": "free_product", "name": "Tea", "point_cost": cost}
        api = await client.post(f"/admin/v1/vendors/{shop.vendor_id}/rewards", json=body, headers=ADMIN)
        form = await client.post("/portal/rewards", data={**body, **keyed(csrf)})
        verdicts.append((cost[:12], api.status_code, form.status_code))
    taken = {"1": (201, 303), "+7": (201, 303), "007": (201, 303), "2147483647": (201, 303)}
    assert verdicts == [(cost[:12], *taken.get(cost, (422, 422))) for cost in POINT_COSTS]


async def test_a_reward_name_is_bounded_as_the_api_bounds_it(client: AsyncTestClient[Litestar]) -> None:
    """PORTAL-2: a name of the declared length is taken, one character more is refused beside the field."""
    shop = await make_shop(client, with_staff=False)
    csrf = await signed_in(client, shop.owner)
    most = bounds.REWARD_NAME.max_length or 0
    body = {"type": "free_product", "point_cost": "3"}
    assert (await client.post("/portal/rewards", data={**body, **keyed(csrf), "name": "n" * most})).status_code == 303
    refused = await client.post("/portal/rewards", data={**body, **keyed(csrf), "name": "n" * (most + 1)})
    assert refused.status_code == 422
    assert f'<span class="error" id="name-problem">At most {most} characters.</span>' in refused.text
    form = await client.get("/portal/rewards/new")
    assert f'name="name" required maxlength="{most}"' in form.text


async def test_an_adjustment_reason_takes_what_the_api_takes(client: AsyncTestClient[Litestar]) -> None:
    """PORTAL-2: the counter's reason is bounded by the API's adjustment reason, not a shorter one."""
    shop = await make_shop(client, with_staff=False)
    customer = await register(client, shop.tenant, email="reason@customer.example")
    csrf = await signed_in(client, shop.owner)
    most = bounds.ADJUST_REASON.max_length or 0
    path = f"/portal/customers/{customer['id']}/adjust"
    taken = await client.post(path, data={**keyed(csrf), "amount": "+5", "reason": "r" * most})
    assert taken.status_code == 303
    refused = await client.post(path, data={**keyed(csrf), "amount": "5", "reason": "r" * (most + 1)})
    assert refused.status_code == 422
    assert f"At most {most} characters." in refused.text
    page = await client.get(f"/portal/customers/{customer['id']}")
    assert f'name="reason" required maxlength="{most}"' in page.text
    assert '<dd id="balance">5</dd>' in page.text  # the refused one changed nothing
