"""Every route an app registers, one ``Endpoint`` per method and path template, so that sweeps over
the whole API (cross-tenant, hostile input, OpenAPI coverage) are built from the app itself and
a route added later cannot be left out without the sweep noticing."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from litestar import Litestar
from litestar.routes import HTTPRoute

Audience = Literal["public", "admin"]
_PARAM = re.compile(r"{(\w+)}")


@dataclass(frozen=True, order=True)
class Endpoint:
    method: str
    path: str
    """The path template with bare parameter names, e.g. ``/api/v1/customers/{customer}/wallet``."""
    params: tuple[str, ...]
    """The path parameters, in the order they appear in ``path``."""
    auth: str | None
    """Who may call it, from the handler's ``opt``: ``vendor``, ``admin`` or ``none``; None for
    routes the framework adds (the OpenAPI pages)."""
    handler: str
    bare: frozenset[int] = frozenset()
    """Statuses it answers with no body, as another party's protocol says (``reads(protocol=...)``)."""

    @property
    def key(self) -> str:
        """``METHOD /path/{param}``: how tables of cases name a route."""
        return f"{self.method} {self.path}"

    @property
    def audience(self) -> Audience:
        return "admin" if self.path.startswith("/admin/") or self.path == "/metrics" else "public"

    def url(self, **values: Any) -> str:
        """The path with each parameter replaced by ``values[name]``; every parameter must be given."""
        missing = set(self.params) - set(values)
        assert not missing, f"{self.key}: no value for {sorted(missing)}"
        return self.path.format(**{name: values[name] for name in self.params})


def endpoints(app: Litestar) -> list[Endpoint]:
    """Every method of every HTTP route, sorted by path then method. The ``OPTIONS`` answers the
    framework adds to each path are left out: they are not endpoints of the API."""
    found: set[Endpoint] = set()
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        params = tuple(_PARAM.findall(route.path_format))
        for handler in route.route_handlers:
            if getattr(handler.fn, "__name__", "") == "options_handler" and handler.http_methods == {"OPTIONS"}:
                continue
            auth = handler.opt.get("auth")
            for method in handler.http_methods:
                bare = frozenset(handler.opt.get("protocol", {}))
                found.add(Endpoint(method, route.path_format, params, auth, handler.handler_name, bare))
    return sorted(found, key=lambda e: (e.path, e.method))
