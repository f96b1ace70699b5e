"""``build_document(app, audience)``: the public (/api/v1 and the unversioned token, health and
unsubscribe routes) or the admin (/admin/v1) OpenAPI 3.1 document of a composed app."""

from __future__ import annotations

from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

import msgspec
from litestar import Litestar, Response
from litestar.routes import HTTPRoute

from loyalty_http.openapi.errors import error_responses, route_codes
from loyalty_http.openapi.examples import annotate
from loyalty_http.openapi.operation_ids import operation_id
from loyalty_http.wire.envelope import ErrorEnvelope
from loyalty_http.wire.pagination import Page
from loyalty_http.wire.validation import SINGLE_LINE

Audience = Literal["public", "admin"]
ADMIN_PREFIX = "/admin/v1"
PASS_WEB_SERVICE = "/passes/"
"""platform_a's pass web service: called by phones, its own section (tag) of the public document."""
REF = "#/components/schemas/{name}"
BODY_TYPES = ("application/json", "application/x-www-form-urlencoded", "multipart/form-data")
RATE_HEADERS = {
    "X-RateLimit-Limit": {"description": "Requests allowed per minute.", "schema": {"type": "integer"}},
    "X-RateLimit-Remaining": {"description": "Requests left this minute.", "schema": {"type": "integer"}},
}
SECURITY: dict[str, dict[str, Any]] = {
    "public": {
        "oauth2": {
            "type": "oauth2",
            "description": "OAuth 2 client credentials: POST /oauth/token with client_id and client_secret.",
            "flows": {"clientCredentials": {"tokenUrl": "/oauth/token", "scopes": {}}},
        }
    },
    "admin": {"adminToken": {"type": "http", "scheme": "bearer", "description": "The admin token."}},
}
INFO = {
    "public": ("Loyalty API", "The vendor API: catalogue, customers, wallets. Errors answer in one envelope."),
    "admin": ("Loyalty admin API", "The back office: plans, vendors, clients, customer care. Admin token."),
}


def is_framework_options(handler: Any) -> bool:
    """The OPTIONS answer Litestar adds to every path (not an endpoint of the API)."""
    return getattr(handler.fn, "__name__", "") == "options_handler" and set(handler.http_methods) == {"OPTIONS"}


def audience_of(path: str) -> Audience:
    """The admin document holds the admin API and the other admin-token route, ``/metrics``."""
    return "admin" if path.startswith(ADMIN_PREFIX) or path == "/metrics" else "public"


def documented(app: Litestar, audience: Audience) -> list[tuple[HTTPRoute, Any, str]]:
    """(route, handler, method) of every operation the audience's document holds, each under one
    path only: a handler mounted at several paths (``/oauth/token`` also under ``/api/v1``, a
    product whose external_id is ``batch``) is documented at its ``canonical_path``. OPTIONS
    answers Litestar adds itself are left out."""
    found: dict[tuple[Any, str], list[tuple[HTTPRoute, Any]]] = {}
    for route in app.routes:
        if not isinstance(route, HTTPRoute) or audience_of(route.path) != audience:
            continue
        for handler in route.route_handlers:
            if is_framework_options(handler):
                continue
            for method in sorted(handler.http_methods):
                found.setdefault((_identity(handler), method), []).append((route, handler))
    out = [(*min(mounts, key=lambda m: canonical_path(m[0].path)), method) for (_, method), mounts in found.items()]
    return sorted(out, key=lambda op: (op[0].path, op[2]))


def _identity(handler: Any) -> str:
    """One handler wherever it is mounted (a controller's subclass mounts copies of its handlers)."""
    fn = handler.fn
    return f"{fn.__module__}.{fn.__qualname__}"


def canonical_path(path: str) -> tuple[int, int, str]:
    """The order in which an operation's paths are preferred: the one naming most parameters (the
    item path over a literal that also reaches it), then the shortest (the unversioned alias)."""
    return (-path.count("{"), len(path), path)


def aliases(app: Litestar, audience: Audience) -> dict[tuple[str, str], tuple[str, str]]:
    """(method, path) of every mount left out of the document -> (method, path) of its operation."""
    kept = {(_identity(h), method): _openapi_path(route.path) for route, h, method in documented(app, audience)}
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for route in app.routes:
        if not isinstance(route, HTTPRoute) or audience_of(route.path) != audience:
            continue
        for handler in route.route_handlers:
            for method in handler.http_methods:
                path = _openapi_path(route.path)
                target = kept.get((_identity(handler), method))
                if target is not None and target != path:
                    out[(method, path)] = (method, target)
    return out


def build_document(app: Litestar, audience: Audience, version: str = "1") -> dict[str, Any]:
    operations = documented(app, audience)
    types_seen: list[Any] = [ErrorEnvelope]
    for _, handler, _ in operations:
        found = (handler.opt.get("body"), handler.opt.get("query"), _success(handler))
        types_seen.extend(t for t in found if t is not None and t not in (str, bytes))
    schemas, components = msgspec.json.schema_components(types_seen, ref_template=REF)
    refs = dict(zip(map(_key, types_seen), schemas, strict=True))
    refs[_key(str)] = refs[_key(bytes)] = {"type": "string"}
    components = {name: _text_rules(_fix_nullable(schema)) for name, schema in components.items()}
    paths: dict[str, dict[str, Any]] = {}
    used_ids: dict[str, str] = {}
    for route, handler, method in operations:
        path = _openapi_path(route.path)
        op = _operation(route, handler, method, audience, refs, components)
        op_id = operation_id(handler, method, path)
        if op_id in used_ids:
            raise ValueError(
                f"operationId {op_id!r} names both {used_ids[op_id]} and {method} {path}: name one in OPERATION_IDS"
            )
        used_ids[op_id] = f"{method} {path}"
        op["operationId"] = op_id
        paths.setdefault(path, {})[method.lower()] = op
    for (method, alias), (_, target) in sorted(aliases(app, audience).items()):
        op = paths[target][method.lower()]
        op["description"] = f"{op.get('description', '')}\n\nAlso answered at `{alias}`.".strip()
    if audience == "public":
        annotate(paths)
    title, description = INFO[audience]
    return {
        "openapi": "3.1.0",
        "info": {"title": title, "version": version, "description": description},
        "servers": [{"url": "/"}],
        "paths": {path: dict(sorted(item.items())) for path, item in sorted(paths.items())},
        "components": {"schemas": dict(sorted(components.items())), "securitySchemes": SECURITY[audience]},
    }


def _key(t: Any) -> str:
    return repr(t)


def _success(handler: Any) -> Any:
    """The body type the handler answers with: ``Response[X]`` is X; None for an empty answer."""
    annotation = handler.parsed_fn_signature.return_type.annotation
    if get_origin(annotation) in (Union, UnionType):
        # a route answering a file or an envelope (the wallet pass): the envelope is the JSON body
        kept = [m for m in get_args(annotation) if not (get_origin(m) is Response or m in (Response, bytes))]
        annotation = kept[0] if len(kept) == 1 else Any
    if get_origin(annotation) is Response or annotation is Response:
        args = get_args(annotation)
        annotation = args[0] if args else Any
    if annotation in (None, type(None)):
        return None
    return annotation


def _openapi_path(path: str) -> str:
    for part in path.split("/"):
        if part.startswith("{") and ":" in part:
            path = path.replace(part, part.split(":", 1)[0] + "}")
    return path


def _operation(
    route: HTTPRoute, handler: Any, method: str, audience: Audience, refs: dict[str, Any], comps: dict[str, Any]
) -> dict[str, Any]:
    opt = handler.opt
    params = list(route.path_parameters)
    op: dict[str, Any] = {"summary": _summary(handler), "tags": [_tag(route.path)]}
    doc = (handler.fn.__doc__ or "").strip()
    if doc:
        op["description"] = doc
    parameters: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string", "minLength": 1}} for name in params
    ]
    query = opt.get("query")
    if query is not None:
        parameters.extend(_query_parameters(comps[query.__name__]))
    success = _success(handler)
    if _is_paged(success):
        parameters.append(
            {
                "name": "page",
                "in": "query",
                "required": False,
                "description": "The page to read, from 1; a page below 1 reads page 1.",
                "schema": {"type": "integer", "default": 1},
            }
        )
    if parameters:
        op["parameters"] = parameters
    body = opt.get("body")
    if body is not None:
        schema = refs[_key(body)]
        op["requestBody"] = {"required": True, "content": {media: {"schema": schema} for media in BODY_TYPES}}
    status = str(handler.status_code)
    ok: dict[str, Any] = {"description": "Success."}
    media = str(getattr(handler.media_type, "value", handler.media_type)) or "application/json"
    if success is not None and handler.status_code != 204:
        if media == "application/json":
            ok["content"] = {media: {"schema": _fix_nullable(refs[_key(success)])}}
        else:
            ok["content"] = {media: {"schema": {"type": "string"}}}
        for file_type in opt.get("files", ()):
            ok["content"] = {file_type: {"schema": {"type": "string", "format": "binary"}}, **ok.get("content", {})}
    if opt.get("limit") is not None:
        ok["headers"] = RATE_HEADERS
    responses = {status: ok, **{str(extra): ok for extra in opt.get("success", ())}}
    responses.update(
        {k: v for k, v in error_responses(route_codes(opt, params, route.path)).items() if k not in responses}
    )
    for bare, meaning in opt.get("protocol", {}).items():
        enveloped = responses.get(str(bare))
        if enveloped is None or str(bare) == status:
            responses[str(bare)] = {"description": meaning}
        else:
            # the pipeline's own refusals of that status still come in the envelope
            responses[str(bare)] = {**enveloped, "description": f"{meaning} Else: {enveloped['description']}"}
    op["responses"] = responses
    auth = opt.get("auth", "vendor")
    op["security"] = [] if auth == "none" else [{next(iter(SECURITY[audience])): []}]
    return op


def _summary(handler: Any) -> str:
    return str(handler.handler_name).replace("_", " ").capitalize()


def _tag(path: str) -> str:
    if path.startswith(PASS_WEB_SERVICE):
        return "pass-web-service"
    parts = [p for p in path.split("/") if p and not p.startswith("{")]
    if parts[:2] in (["api", "v1"], ["admin", "v1"]):
        parts = parts[2:]
    return parts[0] if parts else "service"


def _is_paged(t: Any) -> bool:
    args = get_args(t)
    return bool(args) and get_origin(args[0]) is Page


def _query_parameters(component: dict[str, Any]) -> list[dict[str, Any]]:
    required = set(component.get("required", []))
    return [
        {"name": name, "in": "query", "required": name in required, "schema": schema}
        for name, schema in component.get("properties", {}).items()
    ]


def _fix_nullable(node: Any) -> Any:
    """``oneOf`` whose branches both accept null (``{}`` and ``null``) would refuse null: anyOf."""
    if isinstance(node, dict):
        fixed = {k: _fix_nullable(v) for k, v in node.items()}
        branches = fixed.get("oneOf")
        if isinstance(branches, list) and {"type": "null"} in branches:
            fixed["anyOf"] = fixed.pop("oneOf")
        return fixed
    if isinstance(node, list):
        return [_fix_nullable(v) for v in node]
    return node


NO_NUL = "^[^\\x00]*$"
NOT_BLANK = "^[^\\x00]*[^\\s\\x00][^\\x00]*$"
NO_CONTROL = "^[^\\x00-\\x1f\\x7f]*$"
NOT_BLANK_NO_CONTROL = "^[^\\x00-\\x1f\\x7f]*[^\\s\\x00-\\x1f\\x7f][^\\x00-\\x1f\\x7f]*$"


def _text_rules(component: dict[str, Any]) -> dict[str, Any]:
    """What the validator refuses in text that msgspec's schema does not say: a NUL anywhere, and
    a required string blank after trimming, which counts as missing (INPUT-7, INPUT-8).
    A field typed as any JSON value so that its rule answers instead of the type check is text;
    a ``single_line`` field (``wire.validation.SingleLine``) refuses every control character."""
    required = set(component.get("required", []))
    properties = component.get("properties", {})
    for name, prop in properties.items():
        kinds = {branch.get("type") for branch in prop.get("anyOf", [])}
        if {"string", "object", "array"} <= kinds:
            # a field taking any JSON value so that its rule, not the type check, answers: the rule
            # reads text (a statement version, an identifier), so text is what the caller sends
            prop = properties[name] = {"anyOf": [{"type": "string"}, {"type": "null"}]}
        for branch in prop.get("anyOf", [prop]):
            # text that reaches a mail header or a pass refuses every control character, not only NUL
            single_line = branch.pop(SINGLE_LINE, False)
            if branch.get("type") == "string" and not ({"pattern", "format", "enum"} & set(branch)):
                if single_line:
                    branch["pattern"] = NOT_BLANK_NO_CONTROL if name in required else NO_CONTROL
                else:
                    branch["pattern"] = NOT_BLANK if name in required else NO_NUL
    return component
