"""The OpenAPI documents (OPS-5): every registered route is documented once, with its path
parameters, query parameters and body; both documents are valid OpenAPI 3.1; the files in docs/
are what the routes generate today."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.routes import HTTPRoute
from openapi_spec_validator import validate

from loyalty_http.openapi import build_document
from loyalty_http.openapi.document import Audience, aliases
from loyalty_http.openapi.export import FILES, documents
from loyalty_http.wire.validation import field_names
from tests.support.declared_errors import undeclared
from tests.support.probe import ProbeController
from tests.support.routes import endpoints

DOCS = Path(__file__).resolve().parents[3] / "docs"


@pytest.fixture(scope="module")
def docs(app: Litestar) -> dict[str, dict[str, Any]]:
    return {audience: build_document(app, audience) for audience in ("public", "admin")}


def _options(app: Litestar) -> dict[tuple[str, str], dict[str, Any]]:
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for route in app.routes:
        if isinstance(route, HTTPRoute):
            for handler in route.route_handlers:
                for method in handler.http_methods:
                    out[(method, route.path_format)] = dict(handler.opt)
    return out


def test_every_route_is_in_exactly_one_document_with_its_inputs(app: Litestar, docs: dict[str, dict[str, Any]]) -> None:
    """OPS-5: the documents cannot fall behind the code. Each endpoint appears in one document
    only (admin routes in the admin one), with its path parameters, its query struct's fields and
    a request body exactly when it reads one."""
    options = _options(app)
    moved = {**aliases(app, "public"), **aliases(app, "admin")}
    for endpoint in endpoints(app):
        if (endpoint.method, endpoint.path) in moved:
            continue  # documented once, at its operation's own path (test_every_operation_has_one_path)
        holders = [a for a, d in docs.items() if endpoint.method.lower() in d["paths"].get(endpoint.path, {})]
        assert holders == [endpoint.audience], endpoint.key
        op = docs[endpoint.audience]["paths"][endpoint.path][endpoint.method.lower()]
        params = op.get("parameters", [])
        assert tuple(p["name"] for p in params if p["in"] == "path") == endpoint.params, endpoint.key
        opt = options[(endpoint.method, endpoint.path)]
        query = {p["name"] for p in params if p["in"] == "query"}
        if opt.get("query") is not None:
            assert field_names(opt["query"]) <= query, endpoint.key
        assert ("requestBody" in op) == (opt.get("body") is not None), endpoint.key
        assert op["responses"], endpoint.key


OPERATION_ID = re.compile(r"[a-z]+(?:[A-Z][a-z0-9]*)+")
"""A verb and what it acts on, in camelCase: ``lookupCustomer``, ``verifyRedemption``."""


@pytest.mark.parametrize("audience", ["public", "admin"])
def test_every_operation_has_one_path_and_a_unique_meaningful_id(
    app: Litestar, docs: dict[str, dict[str, Any]], audience: Audience
) -> None:
    """Generated clients name their methods after operationIds: each operation appears once (a
    handler mounted at two paths is documented at one, the other named in its description), and
    its id is a camelCase verb and resource, unique in the document."""
    ops = [(path, method, op) for path, item in docs[audience]["paths"].items() for method, op in item.items()]
    ids = [op["operationId"] for _, _, op in ops]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    # the probe routes are this suite's own, not the service's
    service_ids = [op["operationId"] for path, _, op in ops if not path.startswith(ProbeController.path)]
    assert [i for i in service_ids if not OPERATION_ID.fullmatch(i)] == []
    for (method, alias), (_, target) in aliases(app, audience).items():
        assert method.lower() not in docs[audience]["paths"].get(alias, {}), alias
        assert f"`{alias}`" in docs[audience]["paths"][target][method.lower()]["description"]
    if audience == "public":
        paths = docs["public"]["paths"]
        assert set(paths["/api/v1/products/batch"]) == {"post"}
        assert "/api/v1/oauth/token" not in paths
        assert paths["/api/v1/customers/lookup"]["get"]["operationId"] == "lookupCustomer"
        assert paths["/api/v1/redemptions/{code}/verify"]["post"]["operationId"] == "verifyRedemption"
        assert paths["/api/v1/transactions"]["post"]["operationId"] == "createTransaction"
        assert paths["/oauth/token"]["post"]["operationId"] == "issueToken"


def test_two_operations_with_one_id_stop_the_build(app: Litestar, monkeypatch: pytest.MonkeyPatch) -> None:
    from loyalty_http.openapi import operation_ids

    monkeypatch.setitem(operation_ids.OPERATION_IDS, ("GET", "/api/v1/rewards"), "lookupCustomer")
    with pytest.raises(ValueError, match="lookupCustomer"):
        build_document(app, "public")


@pytest.mark.parametrize("audience", ["public", "admin"])
def test_documents_validate_as_openapi_3_1(docs: dict[str, dict[str, Any]], audience: str) -> None:
    """OPS-5: both documents validate as OpenAPI 3.1 (openapi-spec-validator)."""
    assert docs[audience]["openapi"] == "3.1.0"
    validate(docs[audience])


def test_security_schemes_are_client_credentials_and_admin_bearer(docs: dict[str, dict[str, Any]]) -> None:
    """AUTH-1, AUTH-9: vendors use OAuth 2 client credentials at /oauth/token; the admin API
    a bearer token."""
    public = docs["public"]["components"]["securitySchemes"]
    assert public["oauth2"]["flows"] == {"clientCredentials": {"tokenUrl": "/oauth/token", "scopes": {}}}
    assert docs["admin"]["components"]["securitySchemes"]["adminToken"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "The admin token.",
    }
    lookup = docs["public"]["paths"]["/api/v1/customers/lookup"]["get"]
    assert lookup["security"] == [{"oauth2": []}]
    assert docs["public"]["paths"]["/oauth/token"]["post"]["security"] == []


def test_error_answers_follow_route_properties(docs: dict[str, dict[str, Any]]) -> None:
    """INPUT-1: a vendor route with a body and a customer in its path documents 400, 401, 403,
    404 (CUSTOMER_NOT_FOUND), 413, 415, 422 and 429, each in the error envelope with its codes."""
    op = docs["public"]["paths"]["/api/v1/customers/{customer}/wallet/adjust"]["post"]
    statuses = set(op["responses"])
    assert {"400", "401", "403", "404", "413", "415", "422", "429"} <= statuses
    not_found = op["responses"]["404"]["content"]["application/json"]["schema"]["allOf"]
    assert not_found[0] == {"$ref": "#/components/schemas/ErrorEnvelope"}
    assert not_found[1]["properties"]["error"]["properties"]["code"]["enum"] == [
        "CUSTOMER_NOT_FOUND",
        "ROUTE_NOT_FOUND",
        "WALLET_NOT_FOUND",
    ]
    refused = op["responses"]["422"]["content"]["application/json"]["schema"]["allOf"][1]
    assert {"INSUFFICIENT_BALANCE", "IDEMPOTENCY_KEY_CONFLICT", "CUSTOMER_DEACTIVATED", "VALIDATION_ERROR"} <= set(
        refused["properties"]["error"]["properties"]["code"]["enum"]
    )


@pytest.mark.parametrize(
    ("method", "path", "not_found"),
    [
        ("get", "/admin/v1/plans/{plan_id}", ["PLAN_NOT_FOUND", "ROUTE_NOT_FOUND"]),
        ("patch", "/admin/v1/plans/{plan_id}", ["PLAN_NOT_FOUND", "ROUTE_NOT_FOUND"]),
        ("get", "/admin/v1/vendors/{vendor_id}/usage", ["ROUTE_NOT_FOUND", "VENDOR_NOT_FOUND"]),
        ("get", "/admin/v1/clients/{client_id}", ["CLIENT_NOT_FOUND", "ROUTE_NOT_FOUND"]),
        (
            "get",
            "/admin/v1/vendors/{vendor_id}/rewards/{reward_id}",
            ["REWARD_NOT_FOUND", "ROUTE_NOT_FOUND", "VENDOR_NOT_FOUND"],
        ),
        (
            "get",
            "/admin/v1/vendors/{vendor_id}/branches/{external_id}",
            ["NOT_FOUND", "ROUTE_NOT_FOUND", "VENDOR_NOT_FOUND"],
        ),
        (
            "patch",
            "/admin/v1/vendors/{vendor_id}/branches/{external_id}",
            ["NOT_FOUND", "ROUTE_NOT_FOUND", "VENDOR_NOT_FOUND"],
        ),
        ("patch", "/admin/v1/vendors/{vendor_id}/cards/{code}", ["NOT_FOUND", "ROUTE_NOT_FOUND", "VENDOR_NOT_FOUND"]),
    ],
)
def test_admin_reads_document_their_resources_not_found(
    docs: dict[str, dict[str, Any]], method: str, path: str, not_found: list[str]
) -> None:
    """An unknown id answers its resource's 404 code; an unknown branch or card in an admin path
    the admin API's NOT_FOUND (with details.resource)."""
    op = docs["admin"]["paths"][path][method]
    schema = op["responses"]["404"]["content"]["application/json"]["schema"]["allOf"][1]
    assert schema["properties"]["error"]["properties"]["code"]["enum"] == not_found


def test_admin_lists_document_their_filters_and_pages(docs: dict[str, dict[str, Any]]) -> None:
    """Lists take page and per_page (1..100, default 15) beside their filters; a bad one is a 422."""
    lists = {
        "/admin/v1/plans": {"page", "per_page"},
        "/admin/v1/vendors": {"page", "per_page", "status", "q"},
        "/admin/v1/vendors/{vendor_id}/customers": {"page", "per_page", "q"},
        "/admin/v1/vendors/{vendor_id}/redemptions": {"page", "per_page", "customer_id", "status", "code"},
        "/admin/v1/vendors/{vendor_id}/vouchers": {"page", "per_page", "customer_id"},
        "/admin/v1/vendors/{vendor_id}/cards": {"page", "per_page", "status"},
        "/admin/v1/vendors/{vendor_id}/rewards": {"page", "per_page", "status"},
        "/admin/v1/email-suppressions": {"page", "per_page", "email"},
    }
    for path, names in lists.items():
        op = docs["admin"]["paths"][path]["get"]
        assert {p["name"] for p in op["parameters"] if p["in"] == "query"} == names, path
        assert "422" in op["responses"], path


def test_request_bodies_take_json_form_and_multipart(docs: dict[str, dict[str, Any]]) -> None:
    """INPUT-3: JSON, form-encoded and multipart bodies are all read."""
    body = docs["public"]["paths"]["/api/v1/customers"]["post"]["requestBody"]
    assert set(body["content"]) == {"application/json", "application/x-www-form-urlencoded", "multipart/form-data"}


def test_paginated_routes_document_page_and_per_page_with_bounds(docs: dict[str, dict[str, Any]]) -> None:
    """INPUT-11: page from 1 (below 1 reads page 1), per_page 1..100 defaulting to 15."""
    params = {p["name"]: p for p in docs["public"]["paths"]["/api/v1/products"]["get"]["parameters"]}
    # a page below 1 reads page 1: it is not refused, so the document sets no minimum
    assert params["page"]["schema"] == {"type": "integer", "default": 1}
    per_page = params["per_page"]["schema"]
    assert (per_page["minimum"], per_page["maximum"], per_page["default"]) == (1, 100, 15)


def test_no_schema_lets_null_match_two_oneof_branches(docs: dict[str, dict[str, Any]]) -> None:
    """FAULT-4: ``metadata`` was ``oneOf [{}, null]``, so null matched both branches and was refused."""

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            assert {"type": "null"} not in node.get("oneOf", []), node
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(docs)


@pytest.mark.parametrize("audience", ["public", "admin"])
def test_committed_documents_are_current(audience: Audience) -> None:
    """OPS-5: docs/openapi-*.json are what the routes generate; run ``just openapi`` after a change."""
    name = FILES[audience]
    assert (DOCS / name).read_text(encoding="utf-8") == documents()[name], f"docs/{name} is stale: run `just openapi`"


def _resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with the document's components alongside, so ``$ref``s resolve."""
    return {**schema, "components": document["components"]}


def test_every_example_is_valid_against_its_own_schema(docs: dict[str, dict[str, Any]]) -> None:
    """OPS-5: examples in the public document; one that drifts from the structs fails here."""
    from jsonschema import Draft202012Validator

    from loyalty_http.openapi.examples import REQUESTS, RESPONSES

    public = docs["public"]
    for method, path in REQUESTS:
        media = public["paths"][path][method.lower()]["requestBody"]["content"]["application/json"]
        Draft202012Validator(_resolve(public, media["schema"])).validate(media["example"])
    for method, path, status in RESPONSES:
        media = public["paths"][path][method.lower()]["responses"][status]["content"]["application/json"]
        Draft202012Validator(_resolve(public, media["schema"])).validate(media["example"])


def test_links_name_operations_and_parameters_that_exist(docs: dict[str, dict[str, Any]]) -> None:
    """FAULT-4: stateful links, each to an operation of the document and one of its path parameters."""
    from loyalty_http.openapi.examples import LINKS

    public = docs["public"]
    for method, path, status in LINKS:
        links = public["paths"][path][method.lower()]["responses"][status]["links"]
        for link in links.values():
            target_path, target_method = link["operationRef"].removeprefix("#/paths/").rsplit("/", 1)
            target = public["paths"][target_path.replace("~1", "/").replace("~0", "~")][target_method]
            names = {p["name"] for p in target["parameters"] if p["in"] == "path"}
            assert set(link["parameters"]) <= names, link


def _codes(op: dict[str, Any], status: str) -> list[str]:
    schema = op["responses"][status]["content"]["application/json"]["schema"]["allOf"][1]
    return list(schema["properties"]["error"]["properties"]["code"]["enum"])


def test_every_answer_the_routes_give_is_declared(docs: dict[str, dict[str, Any]]) -> None:
    """A replay of an adjustment or a redemption answers 200 (the first answer again); the admin
    routes' not-found and conflict codes are those they answer with."""
    public, admin = docs["public"]["paths"], docs["admin"]["paths"]
    for path in ("/api/v1/customers/{customer}/wallet/adjust", "/api/v1/redemptions"):
        responses = public[path]["post"]["responses"]
        assert {"200", "201"} <= set(responses), path
        assert responses["200"]["content"] == responses["201"]["content"], path
    vendor = "/admin/v1/vendors/{vendor_id}"
    assert "NOT_FOUND" in _codes(admin[f"{vendor}/branches/{{external_id}}"]["patch"], "404")
    assert "NOT_FOUND" in _codes(admin[f"{vendor}/cards/{{code}}"]["patch"], "404")
    assert "CUSTOMER_NOT_FOUND" in _codes(admin[f"{vendor}/vouchers"]["post"], "404")
    assert "JOB_NOT_FOUND" in _codes(admin["/admin/v1/jobs/{name}/run"]["post"], "404")
    for method, path in (("post", f"{vendor}/branches"), ("patch", f"{vendor}/branches/{{external_id}}")):
        assert _codes(admin[path][method], "409") == ["BRANCH_EXTERNAL_ID_DUPLICATE"], path


def test_an_error_answer_must_be_listed_for_its_route() -> None:
    """OPS-5: the ``client`` fixture fails a test answered with a code the documents do not list
    for the route it hit (a literal segment wins over a parameter); paths of no route are not judged."""
    answered = [
        ("POST", "/api/v1/redemptions", 422, "OUT_OF_STOCK"),
        ("POST", "/api/v1/redemptions", 422, "VOUCHER_EXPIRED"),
        ("POST", "/api/v1/products/batch", 422, "BATCH_TOO_LARGE"),
        ("GET", "/api/v1/products/batch", 404, "BATCH_TOO_LARGE"),
        ("GET", "/api/v1/nowhere", 404, "ROUTE_NOT_FOUND"),
    ]
    assert undeclared(answered) == [
        ("POST", "/api/v1/redemptions", 422, "VOUCHER_EXPIRED"),
        ("GET", "/api/v1/products/{external_id}", 404, "BATCH_TOO_LARGE"),
    ]
