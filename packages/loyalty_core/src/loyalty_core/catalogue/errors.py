"""Catalogue errors, each named for its error code."""

from __future__ import annotations

from loyalty_core.errors import Conflict, NotFound, RuleViolation


class ProductNotFound(NotFound):
    code = "PRODUCT_NOT_FOUND"


class ProductExternalIdDuplicate(Conflict):
    code = "PRODUCT_EXTERNAL_ID_DUPLICATE"


class BatchTooLarge(RuleViolation):
    code = "BATCH_TOO_LARGE"
