"""The documents and their interactive pages: ``/api/v1/openapi.json`` (no token, counted per
address), ``/admin/v1/openapi.json`` (admin token), and Swagger UI at ``/api/v1/docs`` and
``/admin/v1/docs`` with its assets served from the ``swagger-ui-bundle`` package (no CDN).

The admin page loads without a token and asks for it, then fetches the admin document with it;
the same token authorizes the "Try it out" calls.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from litestar import Controller, Litestar, Request, Response, get
from swagger_ui_bundle import swagger_ui_path

from loyalty_http.openapi.document import Audience, build_document
from loyalty_http.route_options import reads

ASSETS = Path(swagger_ui_path)
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<link rel="stylesheet" href="/api/v1/docs/swagger-ui.css"></head>
<body>{form}<div id="ui"></div>
<script src="/api/v1/docs/swagger-ui-bundle.js"></script>
<script>
function show() {{
  const token = sessionStorage.getItem("loyalty-admin-token");
  window.ui = SwaggerUIBundle({{
    url: "{document}", dom_id: "#ui", persistAuthorization: true,
    requestInterceptor: (req) => {{
      if ({admin} && token && !req.headers.Authorization) req.headers.Authorization = "Bearer " + token;
      return req;
    }},
  }});
}}
{start}
</script></body></html>
"""
ADMIN_FORM = """<form id="token" onsubmit="sessionStorage.setItem('loyalty-admin-token',
document.getElementById('t').value); show(); return false;" style="padding:1em;font-family:sans-serif">
<label>Admin token <input id="t" type="password" autocomplete="off"></label> <button>Open</button></form>"""


@cache
def _asset(name: str) -> bytes:
    return (ASSETS / name).read_bytes()


def _document(request: Request[Any, Any, Any], audience: Audience) -> dict[str, Any]:
    app: Litestar = request.app
    key = f"openapi_{audience}"
    found = app.state.get(key)
    if found is None:
        found = app.state[key] = build_document(app, audience)
    return dict(found)


class PublicDocsController(Controller):
    path = "/api/v1"

    @get("/openapi.json", opt=reads(auth="none", limit="address"))
    async def public_openapi(self, request: Request[Any, Any, Any]) -> dict[str, Any]:
        """This document (OpenAPI 3.1); no token, counted in the per-address allowance."""
        return _document(request, "public")

    @get("/docs", opt=reads(auth="none", limit="address"), media_type="text/html")
    async def public_docs(self) -> str:
        """Swagger UI on the public document; "Authorize" takes a client id and secret."""
        return PAGE.format(
            title="Loyalty API", form="", document="/api/v1/openapi.json", admin="false", start="show();"
        )

    # RATE-5: the page's own assets count like every /api/v1 request without a token
    @get("/docs/swagger-ui-bundle.js", opt=reads(auth="none", limit="address"), media_type="text/javascript")
    async def docs_script(self) -> bytes:
        """Swagger UI's script, from the swagger-ui-bundle package."""
        return _asset("swagger-ui-bundle.js")

    @get("/docs/swagger-ui.css", opt=reads(auth="none", limit="address"), media_type="text/css")
    async def docs_style(self) -> bytes:
        """Swagger UI's style sheet, from the swagger-ui-bundle package."""
        return _asset("swagger-ui.css")


class AdminDocsController(Controller):
    path = "/admin/v1"

    @get("/openapi.json", opt=reads(auth="admin"))
    async def admin_openapi(self, request: Request[Any, Any, Any]) -> dict[str, Any]:
        """This document (OpenAPI 3.1); the admin token."""
        return _document(request, "admin")

    @get("/docs", opt=reads(auth="none"), media_type="text/html")
    async def admin_docs(self) -> Response[str]:
        """Swagger UI on the admin document: the page asks for the admin token, then fetches the
        document with it; the token also authorizes "Try it out"."""
        html = PAGE.format(
            title="Loyalty admin API", form=ADMIN_FORM, document="/admin/v1/openapi.json", admin="true", start=""
        )
        return Response(html, media_type="text/html")
