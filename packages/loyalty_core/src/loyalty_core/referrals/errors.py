"""Referrals errors, each named for its code. A programme write that needs the plan's ``referrals``
feature raises ``tenancy.errors.PlanFeatureUnavailable`` (REFERRAL-3)."""

from __future__ import annotations

from loyalty_core.errors import NotFound


class ProgrammeNotFound(NotFound):
    """The vendor has no referral programme (REFERRAL-4)."""

    code = "NOT_FOUND"
