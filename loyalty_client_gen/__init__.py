"""Generates ``packages/loyalty_client``'s models and operations from the committed public OpenAPI
document (``docs/openapi-public.json``): ``uv run --frozen just client`` rewrites them, and
``tests/client/test_generated.py`` fails while the committed files differ from a fresh run.

Only the standard library is used, so the check runs in the client's own environment."""
