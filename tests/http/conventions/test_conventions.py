"""The HTTP conventions every endpoint shares (INPUT-1 to INPUT-18)."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from tests.support.app import ADMIN, build_app
from tests.support.envelope import error_of

ECHO = "/api/v1/probe/echo"


# --- envelope for framework-raised failures -------------------------------------------------


async def test_unknown_route_answers_route_not_found_envelope(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-12: no endpoint at this path is 404 ROUTE_NOT_FOUND."""
    response = await client.get("/api/v1/nope")
    assert response.status_code == 404
    error = error_of(response)
    assert error["code"] == "ROUTE_NOT_FOUND"
    assert "details" not in error


async def test_wrong_version_prefix_answers_route_not_found(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-12: a wrong prefix or spelling gives 404 ROUTE_NOT_FOUND."""
    for path in ("/api/v2/probe/items", "/api/V1/probe/items", "/apiv1/probe/items"):
        response = await client.get(path, headers=ADMIN)
        assert response.status_code == 404, path
        assert error_of(response)["code"] == "ROUTE_NOT_FOUND"


async def test_wrong_verb_answers_method_not_allowed(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-12: path exists but not for this verb is 405 METHOD_NOT_ALLOWED."""
    response = await client.delete(ECHO, headers=ADMIN)
    assert response.status_code == 405
    assert error_of(response)["code"] == "METHOD_NOT_ALLOWED"
    assert "POST" in response.headers["allow"]


async def test_unhandled_exception_answers_internal_error_without_internals(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-1: 500 INTERNAL_ERROR, retry and quote request_id; nothing of the cause leaks."""
    response = await client.get("/api/v1/probe/boom", headers=ADMIN)
    assert response.status_code == 500
    error = error_of(response)
    assert error["code"] == "INTERNAL_ERROR"
    assert "hunter2" not in response.text
    assert "RuntimeError" not in response.text


async def test_domain_error_answers_its_code_and_status(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get("/api/v1/probe/missing", headers=ADMIN)
    assert response.status_code == 404
    error = error_of(response)
    assert error["code"] == "CUSTOMER_NOT_FOUND"
    assert error["details"] == {"identifier": "X"}


async def test_path_with_nul_byte_answers_route_not_found(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-12: ROUTE_NOT_FOUND when the path holds a NUL byte."""
    response = await client.get("/api/v1/probe/things/a%00b", headers=ADMIN)
    assert response.status_code == 404
    assert error_of(response)["code"] == "ROUTE_NOT_FOUND"


async def test_path_with_invalid_utf8_answers_route_not_found(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-12: ROUTE_NOT_FOUND when the path holds invalid UTF-8."""
    response = await client.get("/api/v1/probe/things/a%FFb", headers=ADMIN)
    assert response.status_code == 404
    assert error_of(response)["code"] == "ROUTE_NOT_FOUND"


async def test_readable_path_id_reaches_the_route(client: AsyncTestClient[Litestar]) -> None:
    response = await client.get("/api/v1/probe/things/caf%C3%A9", headers=ADMIN)
    assert response.status_code == 200
    assert response.json() == {"data": {"thing_id": "café"}}


# --- request ids -------------------------------------------------------------------------------


async def test_valid_client_request_id_is_echoed(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-2: a client may send its own X-Request-ID and it is used."""
    rid = "till-7.order_42-" + "x" * 112
    assert len(rid) == 128
    response = await client.get("/api/v1/nope", headers={"X-Request-ID": rid})
    assert response.headers["x-request-id"] == rid
    assert error_of(response)["request_id"] == rid


@pytest.mark.parametrize("sent", ["x" * 129, "has space", "semi;colon", "ünïcode", ""])
async def test_invalid_client_request_id_is_replaced(client: AsyncTestClient[Litestar], sent: str) -> None:
    """INPUT-2: an invalid client X-Request-ID is replaced silently by a generated one."""
    response = await client.get("/api/v1/nope", headers=[(b"x-request-id", sent.encode())])
    rid = response.headers["x-request-id"]
    assert rid != sent
    assert 1 <= len(rid) <= 128
    assert error_of(response)["request_id"] == rid


async def test_success_responses_carry_a_request_id(client: AsyncTestClient[Litestar]) -> None:
    first = await client.get("/health/live")
    second = await client.get("/health/live")
    assert first.status_code == 200
    assert first.headers["x-request-id"] != second.headers["x-request-id"]


# --- body reading ------------------------------------------------------------------------------


async def test_json_form_and_multipart_bodies_get_the_same_answer(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-3: form-encoded and multipart bodies are also read and validated alike."""
    as_json = await client.post(ECHO, json={"name": "Ann", "amount": "12", "active": "1"}, headers=ADMIN)
    as_form = await client.post(ECHO, data={"name": "Ann", "amount": "12", "active": "1"}, headers=ADMIN)
    as_multipart = await client.post(
        ECHO, files={"name": (None, "Ann"), "amount": (None, "12"), "active": (None, "1")}, headers=ADMIN
    )
    for response in (as_json, as_form, as_multipart):
        assert response.status_code == 200, response.text
        assert response.json() == {"data": {"name": "Ann", "amount": 12, "active": True}}


async def test_form_nested_fields_use_brackets(client: AsyncTestClient[Litestar]) -> None:
    response = await client.post(
        ECHO, headers=ADMIN, data={"name": "Ann", "identifiers[0][type]": "email", "identifiers[0][value]": "a@b.nl"}
    )
    assert response.status_code == 200
    assert response.json()["data"]["identifiers"] == [{"type": "email", "value": "a@b.nl"}]


@pytest.mark.parametrize("content_type", ["text/plain", "application/xml", "application/octet-stream"])
async def test_unreadable_content_type_answers_415_before_the_token(
    client: AsyncTestClient[Litestar], content_type: str
) -> None:
    """INPUT-3, AUTH-8: 415 UNSUPPORTED_MEDIA_TYPE comes before the token check."""
    response = await client.post(ECHO, content=b"name=Ann", headers={"Content-Type": content_type})
    assert response.status_code == 415
    assert error_of(response)["code"] == "UNSUPPORTED_MEDIA_TYPE"


async def test_content_type_match_ignores_case(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-3: for UNSUPPORTED_MEDIA_TYPE the case of the type does not matter."""
    response = await client.post(
        ECHO, content=b'{"name": "Ann"}', headers={**ADMIN, "Content-Type": "Application/JSON; charset=UTF-8"}
    )
    assert response.status_code == 200
    form = await client.post(
        ECHO, content=b"name=Ann", headers={**ADMIN, "Content-Type": "APPLICATION/X-WWW-FORM-URLENCODED"}
    )
    assert form.status_code == 200


async def test_request_without_body_is_unaffected_by_content_type(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-3: UNSUPPORTED_MEDIA_TYPE leaves a request without body is unaffected."""
    response = await client.post(ECHO, headers={**ADMIN, "Content-Type": "text/plain"})
    assert response.status_code == 422
    assert error_of(response)["details"] == {"name": ["validation.required"]}


@pytest.mark.parametrize("raw", [b'{"name": "Ann"', b'{"name": "\xff"}', b"{'name': 1}", b'{"name": "A"} x'])
async def test_cut_off_or_non_utf8_json_answers_400_before_the_token(
    client: AsyncTestClient[Litestar], raw: bytes
) -> None:
    """INPUT-4, AUTH-8: INVALID_JSON, before the token check."""
    response = await client.post(ECHO, content=raw, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "INVALID_JSON"


@pytest.mark.parametrize("raw", [b"", b"{}", b"[]", b"null"])
async def test_empty_and_trivial_json_keep_their_normal_answer(client: AsyncTestClient[Litestar], raw: bytes) -> None:
    """INPUT-4: an empty body, {}, [] and null are valid JSON."""
    response = await client.post(ECHO, content=raw, headers={**ADMIN, "Content-Type": "application/json"})
    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "VALIDATION_ERROR"
    assert error["details"] == {"name": ["validation.required"]}


async def test_trivial_json_without_token_answers_401(client: AsyncTestClient[Litestar]) -> None:
    """AUTH-9: the admin API answers 401 UNAUTHENTICATED without its token; a readable body
    does not jump ahead of the token check."""
    response = await client.post(ECHO, json={"name": "Ann"})
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHENTICATED"


async def test_form_with_none_of_the_fields_names_each_key_before_the_token(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-9 (a JSON string sent with a form type), AUTH-8."""
    response = await client.post(
        ECHO, content=b'{"name":"Ann"}&other=1', headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "VALIDATION_ERROR"
    assert set(error["details"]) == {'{"name":"Ann"}', "other"}


async def test_body_over_the_cap_answers_413(engine: Any) -> None:
    """INPUT-6: a body larger than LOYALTY_MAX_BODY_BYTES answers 413 before parsing."""
    app = build_app(engine, test_clock=None, max_body_bytes=2048)
    async with AsyncTestClient(app=app) as small:
        response = await small.post(
            ECHO, content=b'{"name": "' + b"x" * 4000 + b'"}', headers={"Content-Type": "application/json"}
        )
        assert response.status_code == 413
        assert error_of(response)["code"] == "PAYLOAD_TOO_LARGE"


async def test_json_nested_deeper_than_64_levels_answers_400(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-5: JSON nested deeper than 64 levels answers 400 INVALID_JSON."""
    deep = b'{"name": "Ann", "metadata": ' + b'{"a": ' * 64 + b"1" + b"}" * 64 + b"}"
    response = await client.post(ECHO, content=deep, headers={**ADMIN, "Content-Type": "application/json"})
    assert response.status_code == 400
    assert error_of(response)["code"] == "INVALID_JSON"
    shallow = b'{"name": "Ann", "metadata": ' + b'{"a": ' * 62 + b"1" + b"}" * 62 + b"}"
    ok = await client.post(ECHO, content=shallow, headers={**ADMIN, "Content-Type": "application/json"})
    assert ok.status_code == 200


# --- validation details ------------------------------------------------------------------------


async def test_every_failing_field_is_named_with_its_rule_key(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-7: field paths (nested like identifiers.0.type) to messages."""
    response = await client.post(
        ECHO,
        headers=ADMIN,
        json={
            "name": "x" * 21,
            "email": "not-an-email",
            "amount": "ten",
            "quantity": 0,
            "active": "maybe",
            "born_on": "1990-13-01",
            "identifiers": [{"type": "barcode", "value": "A"}, {"value": 3}],
            "metadata": [1],
            "image_url": "ftp://example.com/a.png",
        },
    )
    assert response.status_code == 422
    assert error_of(response)["details"] == {
        "name": ["validation.max.string"],
        "email": ["validation.email"],
        "amount": ["validation.numeric"],
        "quantity": ["validation.min.numeric"],
        "active": ["validation.boolean"],
        "born_on": ["validation.date"],
        "identifiers.0.type": ["validation.in"],
        "identifiers.1.type": ["validation.required"],
        "identifiers.1.value": ["validation.string"],
        "metadata": ["validation.array"],
        "image_url": ["validation.url"],
    }


@pytest.mark.parametrize(
    ("sent", "expected"),
    [
        ({"name": ""}, ["validation.string", "validation.required"]),
        ({"name": None}, ["validation.string", "validation.required"]),
        ({"name": "   "}, ["validation.string", "validation.required"]),
        ({}, ["validation.required"]),
    ],
)
async def test_required_field_sent_empty_gets_type_key_then_required(
    client: AsyncTestClient[Litestar], sent: dict[str, Any], expected: list[str]
) -> None:
    """INPUT-7: empty gets the type key then validation.required; left out, required alone."""
    response = await client.post(ECHO, json=sent, headers=ADMIN)
    assert response.status_code == 422
    assert error_of(response)["details"] == {"name": expected}


async def test_numbers_are_signed_32_bit(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-10: integer fields are signed 32-bit unless a field says otherwise."""
    edges = await client.post(ECHO, json={"name": "A", "amount": -(2**31)}, headers=ADMIN)
    assert edges.status_code == 200
    assert (await client.post(ECHO, json={"name": "A", "amount": 2**31 - 1}, headers=ADMIN)).status_code == 200
    over = await client.post(ECHO, json={"name": "A", "amount": 2**31}, headers=ADMIN)
    under = await client.post(ECHO, json={"name": "A", "amount": -(2**31) - 1}, headers=ADMIN)
    assert error_of(over)["details"] == {"amount": ["validation.max.numeric"]}
    assert error_of(under)["details"] == {"amount": ["validation.min.numeric"]}
    fraction = await client.post(ECHO, json={"name": "A", "amount": 1.5}, headers=ADMIN)
    assert error_of(fraction)["details"] == {"amount": ["validation.integer"]}


async def test_rule_of_the_service_gives_an_english_sentence(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-7: a rule of the service gives an English sentence."""
    response = await client.post(ECHO, json={"name": "A", "amount": 0}, headers=ADMIN)
    assert error_of(response)["details"] == {"amount": ["The amount must not be zero."]}


async def test_text_is_trimmed_and_empty_optional_counts_as_omitted(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-8: trimming of white space and NUL bytes; empty optional = omitted; null clears."""
    response = await client.post(
        ECHO, headers=ADMIN, json={"name": "\x00  Ann \t\x00", "email": "", "note": None, "amount": " 7 "}
    )
    assert response.status_code == 200
    assert response.json() == {"data": {"name": "Ann", "note": None, "amount": 7}}


async def test_nul_inside_text_names_the_field(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-8: a NUL byte inside any text gives 422 with the field in details."""
    response = await client.post(ECHO, json={"name": "A\x00B", "metadata": {"k": "v\x00w"}}, headers=ADMIN)
    assert response.status_code == 422
    assert set(error_of(response)["details"]) == {"name", "metadata"}


async def test_invalid_utf8_in_a_form_field_names_the_field(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-9: text not valid UTF-8 after percent-decoding gives 422 naming the field."""
    response = await client.post(
        ECHO, content=b"name=Ann&note=%FF%FE", headers={**ADMIN, "Content-Type": "application/x-www-form-urlencoded"}
    )
    assert response.status_code == 422
    assert list(error_of(response)["details"]) == ["note"]


async def test_invalid_utf8_in_a_query_parameter_names_it(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-9 (e.g. search=%FF gives 422 with details.search)."""
    response = await client.get("/api/v1/probe/items?search=%FF", headers=ADMIN)
    assert response.status_code == 422
    assert list(error_of(response)["details"]) == ["search"]


async def test_nul_in_a_query_parameter_names_it(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-8: a NUL byte in the body or the query string."""
    response = await client.get("/api/v1/probe/items?search=a%00b", headers=ADMIN)
    assert response.status_code == 422
    assert list(error_of(response)["details"]) == ["search"]


async def test_the_same_bytes_always_give_the_same_answer(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-18."""
    raw = b'{"name": "A\\u0000B", "amount": "x"}'
    answers = [
        await client.post(ECHO, content=raw, headers={**ADMIN, "Content-Type": "application/json"}) for _ in range(3)
    ]
    bodies = [{k: v for k, v in a.json()["error"].items() if k != "request_id"} for a in answers]
    assert bodies[0] == bodies[1] == bodies[2]
    assert bodies[0]["details"] == {"name": ["The value must not contain NUL bytes."], "amount": ["validation.numeric"]}


# --- pagination --------------------------------------------------------------------------------


async def test_paginated_envelope_has_links_and_meta(client: AsyncTestClient[Litestar]) -> None:
    """INPUT-11: paginated envelope; prev and next are null at the ends."""
    first = await client.get("/api/v1/probe/items?total=5&per_page=2", headers=ADMIN)
    assert first.status_code == 200
    body = first.json()["data"]
    assert [i["n"] for i in body["data"]] == [1, 2]
    assert body["meta"] == {"current_page": 1, "last_page": 3, "per_page": 2, "total": 5}
    assert body["links"]["prev"] is None
    assert body["links"]["next"].endswith("page=2")
    assert body["links"]["first"].endswith("page=1")
    assert body["links"]["last"].endswith("page=3")
    last = (await client.get("/api/v1/probe/items?total=5&per_page=2&page=3", headers=ADMIN)).json()["data"]
    assert [i["n"] for i in last["data"]] == [5]
    assert last["links"]["next"] is None
    assert last["links"]["prev"].endswith("page=2")


@pytest.mark.parametrize("page", ["0", "-3", "1.5", "abc", ""])
async def test_page_below_one_or_not_whole_returns_page_one(client: AsyncTestClient[Litestar], page: str) -> None:
    """INPUT-11: a page below 1, or not a whole number, returns page 1."""
    response = await client.get(f"/api/v1/probe/items?total=5&per_page=2&page={page}", headers=ADMIN)
    assert response.status_code == 200
    assert response.json()["data"]["meta"]["current_page"] == 1


@pytest.mark.parametrize(
    ("per_page", "key"),
    [("0", "validation.min.numeric"), ("101", "validation.max.numeric"), ("x", "validation.numeric")],
)
async def test_per_page_out_of_bounds_is_a_validation_error(
    client: AsyncTestClient[Litestar], per_page: str, key: str
) -> None:
    response = await client.get(f"/api/v1/probe/items?per_page={per_page}", headers=ADMIN)
    assert response.status_code == 422
    assert error_of(response)["details"] == {"per_page": [key]}


async def test_empty_list_has_one_page(client: AsyncTestClient[Litestar]) -> None:
    body = (await client.get("/api/v1/probe/items", headers=ADMIN)).json()["data"]
    assert body["data"] == []
    assert body["meta"] == {"current_page": 1, "last_page": 1, "per_page": 15, "total": 0}
    assert body["links"]["prev"] is None
    assert body["links"]["next"] is None
