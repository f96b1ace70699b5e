"""Who may do what: the account-state rules (AUTH-4 to AUTH-7), as a pure function.

AUTH-4 to AUTH-6: a suspended vendor keeps working until ``suspended_grace_until`` (none, or
one in the past, is past its grace); a token without the ``write`` scope cannot write; an ended
subscription refuses writes and still answers reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from loyalty_core.tenancy import errors as e
from loyalty_core.tenancy.models import VendorStatus

CLIENT_CREDENTIALS = "client_credentials"
READ_SCOPE = "read"
WRITE_SCOPE = "write"

WRITE_ADMITTED = f"""EXISTS (
    SELECT 1 FROM issued_tokens gt
    JOIN api_clients gc ON gc.id = gt.api_client_id
    JOIN vendors gv ON gv.id = gc.vendor_id
    WHERE gt.jti = %(jti)s AND NOT gt.revoked AND gt.expires_at > %(now)s AND gc.revoked_at IS NULL
      AND gc.vendor_id = %(vendor_id)s AND '{CLIENT_CREDENTIALS}' = ANY(gc.grant_types)
      AND '{WRITE_SCOPE}' = ANY(gc.scopes)
      AND gv.status = '{VendorStatus.ACTIVE}' AND (gv.subscription_ends_at IS NULL OR gv.subscription_ends_at > %(now)s)
)"""
"""The write-admission rule as SQL, for a write that rides on the token check's statement (its WHERE
holds it): it holds only for a caller ``token_check.caller_of`` admits for a write at ``%(now)s``
(each clause is one of the rules below, :func:`check_vendor_state` and :func:`check_scope`, or
stricter), so a token the check refuses never writes. It is stricter in one case: a suspended
vendor in its grace period, which the check admits; the write then did nothing, says so in a
column, and is sent again on its own once the check has admitted the caller. The literals are
rendered from the same constants the Python rules use, once, at import."""


@dataclass(frozen=True, slots=True)
class BranchRef:
    id: int
    external_id: str
    name: str
    type: str
    active: bool


@dataclass(frozen=True, slots=True)
class PlanLimits:
    max_transactions: int
    max_customers: int
    max_rewards: int
    max_campaigns: int
    max_locations: int
    rate_limit_per_minute: int
    overage_percent: int
    campaigns: bool
    customer_moments: bool
    point_expiry: bool
    tiers: bool = False


@dataclass(frozen=True, slots=True)
class VendorContext:
    """The authenticated caller: one vendor, one client, and what the client's credential carries."""

    vendor_id: int
    api_client_id: int
    client_id: str
    scopes: tuple[str, ...]
    plan: PlanLimits
    points_expire_after_days: int | None
    default_branch: BranchRef | None

    @property
    def point_expiry_days(self) -> int | None:
        """The term of new points: the vendor's setting, while its plan has point expiry."""
        return self.points_expire_after_days if self.plan.point_expiry else None


@dataclass(frozen=True, slots=True)
class VendorState:
    status: str
    suspended_grace_until: datetime | None
    subscription_ends_at: datetime | None


def vendor_usable(state: VendorState, now: datetime) -> bool:
    """Whether the vendor's state lets API traffic through at all (the rate limiter's question)."""
    if state.status == VendorStatus.ACTIVE:
        return True
    return state.status == VendorStatus.SUSPENDED and in_grace(state, now)


def in_grace(state: VendorState, now: datetime) -> bool:
    return state.suspended_grace_until is not None and now < state.suspended_grace_until


def check_vendor_state(state: VendorState, now: datetime, *, write: bool) -> None:
    if state.status == VendorStatus.PENDING:
        raise e.VendorPending("The vendor account is not activated yet.")
    if state.status == VendorStatus.INACTIVE:
        raise e.VendorInactive("The vendor account does not accept API traffic.")
    if state.status == VendorStatus.DEACTIVATED:
        raise e.VendorDeactivated("The vendor account is permanently deactivated.")
    if state.status == VendorStatus.SUSPENDED and not in_grace(state, now):
        raise e.VendorSuspended("The vendor account is suspended and its grace period is over.")
    if write and state.subscription_ends_at is not None and now >= state.subscription_ends_at:
        raise e.SubscriptionExpired("The subscription has ended: reads still answer, writes are refused.")


def check_scope(scopes: tuple[str, ...] | list[str], *, write: bool) -> None:
    if write and WRITE_SCOPE not in scopes:
        raise e.Forbidden("This token may not change data (it lacks the write scope).")
    if not write and READ_SCOPE not in scopes:
        raise e.Forbidden("This token may not read data (it lacks the read scope).")
