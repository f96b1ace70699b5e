"""Who may do what: the account-state rules of spec Authentication, rules 5 to 7, as a pure function.

Contract 5 "Access": a suspended vendor keeps working until ``suspended_grace_until`` (none, or
one in the past, is past its grace); a token without the ``write`` scope cannot write; an ended
subscription refuses writes and still answers reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from loyalty_core.tenancy import errors as e
from loyalty_core.tenancy.models import VendorStatus

CLIENT_CREDENTIALS = "client_credentials"


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
    return state.status == "suspended" and in_grace(state, now)


def in_grace(state: VendorState, now: datetime) -> bool:
    return state.suspended_grace_until is not None and now < state.suspended_grace_until


def check_vendor_state(state: VendorState, now: datetime, *, write: bool) -> None:
    if state.status == "pending":
        raise e.VendorPending("The vendor account is not activated yet.")
    if state.status == "inactive":
        raise e.VendorInactive("The vendor account does not accept API traffic.")
    if state.status == VendorStatus.DEACTIVATED:
        raise e.VendorDeactivated("The vendor account is permanently deactivated.")
    if state.status == "suspended" and not in_grace(state, now):
        raise e.VendorSuspended("The vendor account is suspended and its grace period is over.")
    if write and state.subscription_ends_at is not None and now >= state.subscription_ends_at:
        raise e.SubscriptionExpired("The subscription has ended: reads still answer, writes are refused.")


def check_scope(scopes: tuple[str, ...] | list[str], *, write: bool) -> None:
    if write and "write" not in scopes:
        raise e.Forbidden("This token may not change data (it lacks the write scope).")
    if not write and "read" not in scopes:
        raise e.Forbidden("This token may not read data (it lacks the read scope).")
