"""Tenancy errors, each named for its error code."""

from __future__ import annotations

from loyalty_core.errors import Conflict, DomainError, NotFound


class Unauthenticated(DomainError):
    code = "UNAUTHENTICATED"


class InvalidClient(DomainError):
    code = "INVALID_CLIENT"


class Forbidden(DomainError):
    code = "FORBIDDEN"


class VendorContextMissing(DomainError):
    code = "VENDOR_CONTEXT_MISSING"


class VendorContextRequired(DomainError):
    code = "VENDOR_CONTEXT_REQUIRED"


class VendorPending(DomainError):
    code = "VENDOR_PENDING"


class VendorInactive(DomainError):
    code = "VENDOR_INACTIVE"


class VendorSuspended(DomainError):
    code = "VENDOR_SUSPENDED"


class VendorDeactivated(DomainError):
    code = "VENDOR_DEACTIVATED"


class SubscriptionExpired(DomainError):
    code = "SUBSCRIPTION_EXPIRED"


class VendorNotFound(NotFound):
    code = "VENDOR_NOT_FOUND"


class PlanNotFound(NotFound):
    code = "PLAN_NOT_FOUND"


class ClientNotFound(NotFound):
    code = "CLIENT_NOT_FOUND"


class BranchNotFound(DomainError):
    """EARN-7: 422, no branch of the vendor has this key (deactivated branches count as found)."""

    code = "BRANCH_NOT_FOUND"


class BranchInactive(DomainError):
    code = "BRANCH_INACTIVE"


class AdminBranchNotFound(NotFound):
    """The admin API's 404 for a branch path that names nothing (``details.resource`` is ``branch``)."""

    code = "NOT_FOUND"


class BranchExternalIdDuplicate(Conflict):
    code = "BRANCH_EXTERNAL_ID_DUPLICATE"


class PlanFeatureUnavailable(DomainError):
    """A write that needs a feature the vendor's plan lacks (403): a campaign of a family it lacks
    (EARN-12), a ladder without ``tiers`` (TIER-5)."""

    code = "PLAN_FEATURE_UNAVAILABLE"
