"""Generates ``packages/loyalty_client``'s models, operations, client methods and error classes from
the committed public OpenAPI document (``docs/openapi-public.json``): ``uv run --frozen just client``
rewrites them, and ``tests/client/test_generated.py`` fails while the committed files differ from a
fresh run.

The models and the operations are split by the document's tags (``loyalty_client/models/<area>.py``,
``loyalty_client/operations/<area>.py``; a model more than one area uses is in ``models/shared.py``).
Only the standard library is used, so the check runs in the client's own environment."""
