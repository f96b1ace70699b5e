"""Voucher errors, each named for its error code."""

from __future__ import annotations

from loyalty_core.errors import NotFound, RuleViolation


class VoucherNotFound(NotFound):
    code = "VOUCHER_NOT_FOUND"


class VoucherAlreadyUsed(RuleViolation):
    code = "VOUCHER_ALREADY_USED"


class VoucherExpired(RuleViolation):
    code = "VOUCHER_EXPIRED"


class BranchRequired(RuleViolation):
    code = "BRANCH_REQUIRED"
