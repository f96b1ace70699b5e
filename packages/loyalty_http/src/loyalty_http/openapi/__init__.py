"""The service's OpenAPI 3.1 documents, generated from what the routes declare.

A route is documented from its registration alone: its path parameters, the ``body=`` and
``query=`` structs of its :func:`loyalty_http.route_options.reads` options, the return annotation
of its handler (``Envelope[X]``), its auth kind and the ``errors=`` codes it declares. Nothing is
written by hand per route.
"""

from loyalty_http.openapi.document import Audience, build_document

__all__ = ["Audience", "build_document"]
