"""The documents and their interactive pages: ``/api/v1/openapi.json`` (no token, counted per
address), ``/admin/v1/openapi.json`` (admin token), and Swagger UI 5 (it reads OpenAPI 3.1; the 4.x
line refuses the documents) at ``/api/v1/docs`` and ``/admin/v1/docs``. The page's script and style
sheet come from the ``swagger-ui-py`` package and are served here: a browser that opens the docs
asks nothing of any other host.

The admin page loads without a token (a browser sends no bearer header when it opens a page) and
asks for it; only then does it fetch the admin document, with the token, which also authorizes the
"Try it out" calls. The token lives in the page's memory, not in the browser's storage.
"""

from __future__ import annotations

from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from litestar import Controller, Litestar, Request, Response, get

from loyalty_http.openapi.document import Audience, build_document
from loyalty_http.route_options import reads


def _assets() -> Path:
    # located without importing the package: its __init__ loads handlers for other frameworks
    spec = find_spec("swagger_ui")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the swagger-ui-py package is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "static"


# the icon link keeps the browser from asking for /favicon.ico; validatorUrl null keeps Swagger UI
# from sending the document to its public validator
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/api/v1/docs/swagger-ui.css"></head>
<body>{form}<div id="ui"></div>
<script src="/api/v1/docs/swagger-ui-bundle.js"></script>
<script>
let token = null;
function show() {{
  window.ui = SwaggerUIBundle({{
    url: "{document}", dom_id: "#ui", validatorUrl: null, deepLinking: false,
    requestInterceptor: (req) => {{
      if (token && !req.headers.Authorization) req.headers.Authorization = "Bearer " + token;
      return req;
    }},
  }});
}}
{start}
</script></body></html>
"""
ADMIN_FORM = """<form id="token" style="padding:1em;font-family:sans-serif"
onsubmit="token = document.getElementById('admin-token').value; this.hidden = true; show(); return false;">
<label>Admin token <input id="admin-token" type="password" autocomplete="off" required></label>
<button type="submit">Open</button>
<p>The admin API's document and its calls need the admin token (<code>LOYALTY_ADMIN_TOKEN</code>).</p></form>"""


@cache
def _asset(name: str) -> bytes:
    return (_assets() / name).read_bytes()


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
        return PAGE.format(title="Loyalty API", form="", document="/api/v1/openapi.json", start="show();")

    # the page's own assets count like every /api/v1 request without a token
    @get("/docs/swagger-ui-bundle.js", opt=reads(auth="none", limit="address"), media_type="text/javascript")
    async def docs_script(self) -> bytes:
        """Swagger UI's script, from the swagger-ui-py package."""
        return _asset("swagger-ui-bundle.js")

    @get("/docs/swagger-ui.css", opt=reads(auth="none", limit="address"), media_type="text/css")
    async def docs_style(self) -> bytes:
        """Swagger UI's style sheet, from the swagger-ui-py package."""
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
        html = PAGE.format(title="Loyalty admin API", form=ADMIN_FORM, document="/admin/v1/openapi.json", start="")
        return Response(html, media_type="text/html")
