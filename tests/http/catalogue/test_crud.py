"""POST, PUT, PATCH, GET and DELETE /api/v1/products (CATALOGUE-1 to
CATALOGUE-7)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.envelope import details_of, error_of
from tests.support.products import PRODUCT_FIELDS, PRODUCTS, create, listed
from tests.support.tenants import make_tenant

FULL: dict[str, Any] = {
    "external_id": "SKU-1",
    "name": "Espresso",
    "description": "Strong",
    "price_cents": 250,
    "image_url": "https://cdn.example.com/espresso.png",
    "category": "Coffee",
    "stock": 12,
    "status": "inactive",
    "metadata": {"origin": "Brazil", "roast": {"level": 3}},
}


# --- POST ------------------------------------------------------------------------------------------


async def test_create_answers_201_with_every_field(client: AsyncTestClient[Litestar]) -> None:
    """POST /products: 201 { data: <product> } with every field of the product resource."""
    tenant = await make_tenant(client)
    response = await client.post(PRODUCTS, json=FULL, headers=tenant.headers)
    assert response.status_code == 201
    product = response.json()["data"]
    assert set(product) == PRODUCT_FIELDS
    assert {k: product[k] for k in FULL} == FULL
    assert isinstance(product["id"], int)
    assert product["created_at"] == product["updated_at"]
    assert product["created_at"].endswith("Z")


async def test_create_defaults_status_to_active_and_optional_fields_to_null(client: AsyncTestClient[Litestar]) -> None:
    """A product's status defaults to active; every field but external_id and name optional."""
    tenant = await make_tenant(client)
    product = await create(client, tenant, "A", "a")
    assert product["status"] == "active"
    for field in ("description", "price_cents", "image_url", "category", "stock", "metadata"):
        assert product[field] is None


async def test_create_requires_external_id_and_name(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-7: external_id and name are required on POST; left out gets
    validation.required alone, sent empty the type key first."""
    tenant = await make_tenant(client)
    left_out = await client.post(PRODUCTS, json={}, headers=tenant.headers)
    assert details_of(left_out) == {"external_id": ["validation.required"], "name": ["validation.required"]}
    empty = await client.post(PRODUCTS, json={"external_id": "  ", "name": None}, headers=tenant.headers)
    assert details_of(empty) == {
        "external_id": ["validation.string", "validation.required"],
        "name": ["validation.string", "validation.required"],
    }


async def test_create_of_a_held_external_id_answers_409(client: AsyncTestClient[Litestar]) -> None:
    """CATALOGUE-1: 409 PRODUCT_EXTERNAL_ID_DUPLICATE when the vendor already has that external_id."""
    tenant = await make_tenant(client)
    await create(client, tenant, "A", "first")
    response = await client.post(PRODUCTS, json={"external_id": "A", "name": "second"}, headers=tenant.headers)
    assert response.status_code == 409
    assert error_of(response)["code"] == "PRODUCT_EXTERNAL_ID_DUPLICATE"
    assert (await client.get(f"{PRODUCTS}/A", headers=tenant.headers)).json()["data"]["name"] == "first"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("price_cents", -1, "validation.min.numeric"),
        ("stock", -1, "validation.min.numeric"),
        ("price_cents", 2**31, "validation.max.numeric"),
        ("stock", 1.5, "validation.integer"),
        ("price_cents", "ten", "validation.numeric"),
        ("status", "sold", "validation.in"),
        ("name", "x" * 256, "validation.max.string"),
        ("external_id", "x" * 256, "validation.max.string"),
        ("category", 7, "validation.string"),
        ("metadata", [1, 2], "validation.array"),
        ("metadata", "text", "validation.array"),
    ],
)
async def test_field_rules(client: AsyncTestClient[Litestar], field: str, value: Any, message: str) -> None:
    """INPUT-10: integers are signed 32-bit; price_cents and stock at least 0; a product's
    status is active, inactive or archived; metadata an object."""
    tenant = await make_tenant(client)
    body = {"external_id": "A", "name": "a", field: value}
    assert details_of(await client.post(PRODUCTS, json=body, headers=tenant.headers)) == {field: [message]}


async def test_numeric_bounds_accept_the_edges(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    product = await create(client, tenant, "A", "a", price_cents=0, stock=2**31 - 1)
    assert (product["price_cents"], product["stock"]) == (0, 2**31 - 1)


@pytest.mark.parametrize(
    "url", ["ftp://cdn.example.com/a.png", "/images/a.png", "cdn.example.com/a.png", "javascript:alert(1)", "https://"]
)
async def test_image_url_must_be_absolute_http_or_https(client: AsyncTestClient[Litestar], url: str) -> None:
    """CATALOGUE-7: image_url is an absolute URL, scheme http or https only."""
    tenant = await make_tenant(client)
    body = {"external_id": "A", "name": "a", "image_url": url}
    assert details_of(await client.post(PRODUCTS, json=body, headers=tenant.headers)) == {
        "image_url": ["validation.url"]
    }


async def test_image_url_http_and_https_are_accepted(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    assert (await create(client, tenant, "A", "a", image_url="http://x.example/a.png"))["image_url"]
    assert (await create(client, tenant, "B", "b", image_url="HTTPS://x.example/b?size=2"))["image_url"]


async def test_text_is_trimmed_and_a_nul_inside_is_refused(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-8: trimmed of white space and NUL bytes at both ends; a NUL inside text is 422 on its field."""
    tenant = await make_tenant(client)
    product = await create(client, tenant, "\x00 A \n", "\tEspresso\x00", category="")
    assert (product["external_id"], product["name"], product["category"]) == ("A", "Espresso", None)
    inside = await client.post(PRODUCTS, json={"external_id": "B", "name": "Es\x00presso"}, headers=tenant.headers)
    assert details_of(inside) == {"name": ["The value must not contain NUL bytes."]}
    in_metadata = await client.post(
        PRODUCTS, json={"external_id": "B", "name": "b", "metadata": {"k": "a\x00b"}}, headers=tenant.headers
    )
    assert details_of(in_metadata) == {"metadata": ["The value must not contain NUL bytes."]}


async def test_form_bodies_are_read_like_json(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-3: form-encoded bodies are also read; form keys nest with brackets."""
    tenant = await make_tenant(client)
    response = await client.post(
        PRODUCTS,
        data={"external_id": "A", "name": "a", "price_cents": "250", "metadata[color]": "red", "metadata[size]": "L"},
        headers=tenant.headers,
    )
    assert response.status_code == 201, response.text
    product = response.json()["data"]
    assert (product["price_cents"], product["metadata"]) == (250, {"color": "red", "size": "L"})


# --- metadata -----------------------------------------------------------------------------------------


def _metadata_of_size(size: int) -> dict[str, str]:
    """An object whose compact JSON is ``size`` bytes of UTF-8, with two-byte characters in it."""
    frame = len('{"k":""}')
    accents = "é" * 100
    return {"k": accents + "x" * (size - frame - len(accents.encode()))}


async def test_metadata_of_16384_bytes_is_accepted_and_16385_refused(client: AsyncTestClient[Litestar]) -> None:
    """CATALOGUE-6: product metadata at most 16384 bytes of UTF-8 in compact JSON form."""
    tenant = await make_tenant(client)
    at_limit = _metadata_of_size(16384)
    assert len(json.dumps(at_limit, ensure_ascii=False, separators=(",", ":")).encode()) == 16384
    assert (await create(client, tenant, "A", "a", metadata=at_limit))["metadata"] == at_limit
    over = _metadata_of_size(16385)
    for response in (
        await client.post(PRODUCTS, json={"external_id": "B", "name": "b", "metadata": over}, headers=tenant.headers),
        await client.put(f"{PRODUCTS}/B", json={"name": "b", "metadata": over}, headers=tenant.headers),
        await client.patch(f"{PRODUCTS}/A", json={"metadata": over}, headers=tenant.headers),
    ):
        assert details_of(response) == {
            "metadata": ["The metadata must not be larger than 16384 bytes of UTF-8 in compact JSON form."]
        }


async def test_metadata_size_is_measured_compact_not_as_sent(client: AsyncTestClient[Litestar]) -> None:
    """CATALOGUE-6: the size is that of the compact form, whatever white space the body carried."""
    tenant = await make_tenant(client)
    at_limit = _metadata_of_size(16384)
    spaced = json.dumps({"external_id": "A", "name": "a", "metadata": at_limit}, indent=8).encode()
    response = await client.post(
        PRODUCTS, content=spaced, headers={**tenant.headers, "Content-Type": "application/json"}
    )
    assert response.status_code == 201, response.text


async def test_metadata_comes_back_exactly_as_sent_key_order_included(client: AsyncTestClient[Litestar]) -> None:
    """CATALOGUE-6: metadata is returned unchanged; JSONB would reorder the keys."""
    tenant = await make_tenant(client)
    sent = b'{"external_id":"A","name":"a","metadata":{"zeta":1,"alpha":{"b":[1,"\xc3\xa9",null],"a":true},"mid":""}}'
    created = await client.post(PRODUCTS, content=sent, headers={**tenant.headers, "Content-Type": "application/json"})
    assert created.status_code == 201
    expected = b'"metadata":{"zeta":1,"alpha":{"b":[1,"\xc3\xa9",null],"a":true},"mid":""}'
    assert expected in created.content
    assert expected in (await client.get(f"{PRODUCTS}/A", headers=tenant.headers)).content
    assert expected in (await client.get(PRODUCTS, headers=tenant.headers)).content


# --- PUT -------------------------------------------------------------------------------------------


async def test_put_creates_201_then_replaces_200(client: AsyncTestClient[Litestar]) -> None:
    """CATALOGUE-2: PUT is an idempotent create-or-replace; 201 when created, 200 when replaced;
    omitted optional fields are cleared; status returns to active."""
    tenant = await make_tenant(client)
    body = {k: v for k, v in FULL.items() if k != "external_id"}
    created = await client.put(f"{PRODUCTS}/SKU-1", json=body, headers=tenant.headers)
    assert created.status_code == 201
    assert {k: created.json()["data"][k] for k in FULL} == FULL
    replaced = await client.put(f"{PRODUCTS}/SKU-1", json={"name": "Ristretto"}, headers=tenant.headers)
    assert replaced.status_code == 200
    product = replaced.json()["data"]
    assert product["id"] == created.json()["data"]["id"]
    assert product["created_at"] == created.json()["data"]["created_at"]
    assert (product["name"], product["status"]) == ("Ristretto", "active")
    for field in ("description", "price_cents", "image_url", "category", "stock", "metadata"):
        assert product[field] is None
    again = await client.put(f"{PRODUCTS}/SKU-1", json={"name": "Ristretto"}, headers=tenant.headers)
    assert again.status_code == 200


async def test_put_requires_name(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    response = await client.put(f"{PRODUCTS}/A", json={"price_cents": 1}, headers=tenant.headers)
    assert details_of(response) == {"name": ["validation.required"]}


async def test_put_takes_external_id_from_the_path(client: AsyncTestClient[Litestar]) -> None:
    """CATALOGUE-1: the body of a PUT is the product without external_id, which comes from the
    path; external_id is immutable, so a different one in the body is refused."""
    tenant = await make_tenant(client)
    same = await client.put(f"{PRODUCTS}/A", json={"external_id": "A", "name": "a"}, headers=tenant.headers)
    assert same.status_code == 201
    other = await client.put(f"{PRODUCTS}/A", json={"external_id": "B", "name": "b"}, headers=tenant.headers)
    assert details_of(other) == {
        "external_id": ["The external_id comes from the path; a different one cannot be sent in the body."]
    }
    assert await listed(client, tenant) == ["A"]


async def test_put_path_id_follows_the_external_id_rules(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-8: text is trimmed; the path id of a PUT is held to the body's bounds."""
    tenant = await make_tenant(client)
    trimmed = await client.put(f"{PRODUCTS}/%20A%20", json={"name": "a"}, headers=tenant.headers)
    assert trimmed.status_code == 201
    assert trimmed.json()["data"]["external_id"] == "A"
    too_long = await client.put(f"{PRODUCTS}/{'x' * 256}", json={"name": "a"}, headers=tenant.headers)
    assert details_of(too_long) == {"external_id": ["validation.max.string"]}
    blank = await client.put(f"{PRODUCTS}/%20", json={"name": "a"}, headers=tenant.headers)
    assert details_of(blank) == {"external_id": ["validation.string", "validation.required"]}


# --- PATCH -----------------------------------------------------------------------------------------


async def test_patch_changes_only_the_fields_present(client: AsyncTestClient[Litestar]) -> None:
    """CATALOGUE-3: PATCH changes only the fields present; an explicit null clears an
    optional field and an empty one counts as omitted."""
    tenant = await make_tenant(client)
    before = await create(client, tenant, **FULL)
    response = await client.patch(
        f"{PRODUCTS}/SKU-1",
        json={"price_cents": 300, "description": None, "category": "", "metadata": {"b": 2, "a": 1}},
        headers=tenant.headers,
    )
    assert response.status_code == 200
    after = response.json()["data"]
    assert (after["price_cents"], after["description"], after["category"]) == (300, None, "Coffee")
    assert list(after["metadata"]) == ["b", "a"]
    for unchanged in ("id", "external_id", "name", "image_url", "stock", "status", "created_at"):
        assert after[unchanged] == before[unchanged]
    status_cleared = await client.patch(f"{PRODUCTS}/SKU-1", json={"status": None}, headers=tenant.headers)
    assert status_cleared.json()["data"]["status"] == "active"


async def test_patch_refuses_external_id_and_a_null_name(client: AsyncTestClient[Litestar]) -> None:
    """CATALOGUE-1: external_id in a PATCH body is refused with 422 (immutable after creation);
    name is required, so it cannot be cleared."""
    tenant = await make_tenant(client)
    await create(client, tenant, "A", "a")
    for external_id in ("B", "A", None):
        response = await client.patch(f"{PRODUCTS}/A", json={"external_id": external_id}, headers=tenant.headers)
        assert details_of(response) == {
            "external_id": ["The external_id cannot be changed; it identifies the product."]
        }
    no_name = await client.patch(f"{PRODUCTS}/A", json={"name": None}, headers=tenant.headers)
    assert details_of(no_name) == {"name": ["validation.string", "validation.required"]}
    assert await listed(client, tenant) == ["A"]


async def test_patch_of_an_unknown_product_answers_404(client: AsyncTestClient[Litestar]) -> None:
    """PATCH of an unknown product: 404 PRODUCT_NOT_FOUND."""
    tenant = await make_tenant(client)
    response = await client.patch(f"{PRODUCTS}/nope", json={"name": "x"}, headers=tenant.headers)
    assert response.status_code == 404
    assert error_of(response)["code"] == "PRODUCT_NOT_FOUND"
    empty = await client.patch(f"{PRODUCTS}/nope", json={}, headers=tenant.headers)
    assert empty.status_code == 404


async def test_empty_patch_answers_the_product_unchanged(client: AsyncTestClient[Litestar]) -> None:
    tenant = await make_tenant(client)
    before = await create(client, tenant, "A", "a")
    response = await client.patch(f"{PRODUCTS}/A", json={}, headers=tenant.headers)
    assert response.status_code == 200
    assert response.json()["data"] == before


# --- GET and DELETE -----------------------------------------------------------------------------------


async def test_get_answers_the_product_or_404(client: AsyncTestClient[Litestar]) -> None:
    """GET /products/{externalId}: 200 { data: <product> }; 404 PRODUCT_NOT_FOUND."""
    tenant = await make_tenant(client)
    made = await create(client, tenant, "A", "a")
    found = await client.get(f"{PRODUCTS}/A", headers=tenant.headers)
    assert found.status_code == 200
    assert found.json() == {"data": made}
    missing = await client.get(f"{PRODUCTS}/B", headers=tenant.headers)
    assert missing.status_code == 404
    assert error_of(missing)["code"] == "PRODUCT_NOT_FOUND"


async def test_delete_is_a_soft_delete_answered_204(client: AsyncTestClient[Litestar]) -> None:
    """CATALOGUE-4: DELETE is a soft delete, 204 with no body, 404 PRODUCT_NOT_FOUND; a deleted product leaves
    the catalogue."""
    tenant = await make_tenant(client)
    await create(client, tenant, "A", "a")
    await create(client, tenant, "B", "b")
    deleted = await client.delete(f"{PRODUCTS}/A", headers=tenant.headers)
    assert deleted.status_code == 204
    assert deleted.content == b""
    assert await listed(client, tenant) == ["B"]
    for response in (
        await client.get(f"{PRODUCTS}/A", headers=tenant.headers),
        await client.patch(f"{PRODUCTS}/A", json={"name": "x"}, headers=tenant.headers),
        await client.delete(f"{PRODUCTS}/A", headers=tenant.headers),
    ):
        assert response.status_code == 404
        assert error_of(response)["code"] == "PRODUCT_NOT_FOUND"


async def test_put_restores_a_deleted_product_as_a_replace_and_post_answers_409(
    client: AsyncTestClient[Litestar],
) -> None:
    """CATALOGUE-2: a later PUT with the same external_id restores it; it
    counts as a replace (200) and a POST on it answers 409 PRODUCT_EXTERNAL_ID_DUPLICATE."""
    tenant = await make_tenant(client)
    made = await create(client, tenant, "A", "a", category="c")
    await client.delete(f"{PRODUCTS}/A", headers=tenant.headers)
    post = await client.post(PRODUCTS, json={"external_id": "A", "name": "again"}, headers=tenant.headers)
    assert post.status_code == 409
    assert error_of(post)["code"] == "PRODUCT_EXTERNAL_ID_DUPLICATE"
    restored = await client.put(f"{PRODUCTS}/A", json={"name": "back"}, headers=tenant.headers)
    assert restored.status_code == 200
    product = restored.json()["data"]
    assert (product["id"], product["name"], product["category"]) == (made["id"], "back", None)
    assert await listed(client, tenant) == ["A"]


async def test_a_product_named_batch_is_reachable(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-14: only an external_id holding ``/`` cannot be used in a path, so ``batch``
    can, even though POST /products/batch owns that path for POST."""
    tenant = await make_tenant(client)
    assert (await client.put(f"{PRODUCTS}/batch", json={"name": "b"}, headers=tenant.headers)).status_code == 201
    assert (await client.get(f"{PRODUCTS}/batch", headers=tenant.headers)).json()["data"]["name"] == "b"
    patched = await client.patch(f"{PRODUCTS}/batch", json={"name": "c"}, headers=tenant.headers)
    assert patched.json()["data"]["name"] == "c"
    assert (await client.delete(f"{PRODUCTS}/batch", headers=tenant.headers)).status_code == 204
    assert (await client.get(f"{PRODUCTS}/batch", headers=tenant.headers)).status_code == 404
