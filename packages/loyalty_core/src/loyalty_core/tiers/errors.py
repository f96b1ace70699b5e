"""Tiers errors, each named for its code. A write that needs the plan's ``tiers`` feature raises
``tenancy.errors.PlanFeatureUnavailable`` (TIER-5)."""

from __future__ import annotations

from loyalty_core.errors import NotFound


class LadderNotFound(NotFound):
    """The vendor has no ladder (or, on the public read, its plan lacks ``tiers``)."""

    code = "NOT_FOUND"
