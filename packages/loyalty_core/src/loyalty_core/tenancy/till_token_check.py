"""The token check every vendor request makes, as one prepared statement on the request's connection.

AUTH-3 to AUTH-7: a revoked token or client is refused on
its very next request in every process, so the check reads the token's row each time; everything the
request needs about its caller (client, vendor state, plan, default branch) comes back in that one
indexed read, which starts from the unique index on ``issued_tokens.jti``. It runs through psycopg
directly, prepared on the connection, with no ORM or SQL compilation on the way.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from loyalty_core.tenancy import errors as e
from loyalty_core.tenancy.rules.access import (
    CLIENT_CREDENTIALS,
    BranchRef,
    PlanLimits,
    VendorContext,
    VendorState,
    check_scope,
    check_vendor_state,
)
from loyalty_core.till_sql import Params, bound, statements_of

SQL = statements_of(__name__)


class VendorScope(Params, frozen=True):
    """A statement over one vendor's rows: its vendor."""

    vendor_id: int | None
    """The token's claimed vendor in the token check (None when it claims none)."""


class TokenCheck(VendorScope, frozen=True):
    """The token check's parameters: a read riding on it binds them besides its own."""

    jti: str


ACCESS_SQL = """
SELECT p.max_transactions, p.max_customers, p.max_rewards, p.max_campaigns, p.max_locations,
       p.rate_limit_per_minute, p.overage_percent,
       p.feature_campaigns, p.feature_customer_moments, p.feature_point_expiry, p.feature_tiers,
       t.revoked, t.expires_at,
       c.id, c.client_id, c.revoked_at, c.vendor_id, c.scopes, c.grant_types, c.platform,
       v.id, v.status, v.suspended_grace_until, v.subscription_ends_at, v.points_expire_after_days,
       b.id, b.external_id, b.name, b.type, b.active
FROM issued_tokens t
JOIN api_clients c ON c.id = t.api_client_id
LEFT JOIN vendors v ON v.id = %(vendor_id)s
LEFT JOIN plans p ON p.id = v.plan_id
LEFT JOIN branches b ON b.id = c.default_branch_id
WHERE t.jti = %(jti)s
"""
SQL("token_check", ACCESS_SQL, TokenCheck)


@dataclass(frozen=True, slots=True)
class AccessRow:
    """The row of ``ACCESS_SQL``, its columns in order (None where a join found nothing); the plan's
    columns, the first ones, in the order of :class:`PlanLimits`, which holds them."""

    plan: PlanLimits
    token_revoked: bool
    token_expires_at: datetime
    api_client_id: int
    client_id: str
    client_revoked_at: datetime | None
    client_vendor_id: int | None
    scopes: list[str]
    grant_types: list[str]
    platform: bool
    vendor_id: int | None
    vendor_status: str
    suspended_grace_until: datetime | None
    subscription_ends_at: datetime | None
    points_expire_after_days: int | None
    branch_id: int | None
    branch_external_id: str
    branch_name: str
    branch_type: str
    branch_active: bool


_PLAN_COLUMNS = len(PlanLimits.__dataclass_fields__)
"""Where the plan's columns end."""
ACCESS_COLUMNS = _PLAN_COLUMNS + len(AccessRow.__dataclass_fields__) - 1
"""Where the token's columns end in a row that carries a companion read after them."""


def _access_row(row: Any) -> AccessRow:
    # the caller's context takes the plan as built here: no second copy of its limits per request
    return AccessRow(PlanLimits(*row[:_PLAN_COLUMNS]), *row[_PLAN_COLUMNS:ACCESS_COLUMNS])


@dataclass(frozen=True, slots=True)
class CompanionRead:
    """A statement that rides on the token check's round trip: a read, or a write (``ctes``) whose
    WHERE holds :data:`~loyalty_core.tenancy.rules.access.WRITE_ADMITTED`.

    ``sql`` selects at most one row of the caller's vendor, named ``%(vendor_id)s`` (the token's
    claimed vendor: the check refuses the request unless the token's client belongs to it), with a
    first column that is never null on a row it finds; ``params`` are its other parameters (the
    check adds :class:`TokenCheck`'s). The read runs whatever the check decides, and its row is
    handed over only when the check admits the caller, so a refused token learns nothing from it.
    """

    sql: str
    params: Params
    ctes: str = ""
    """Common table expressions the statement starts with: a data-modifying one (which PostgreSQL
    takes only at the top), whose WHERE holds :data:`~loyalty_core.tenancy.rules.access.WRITE_ADMITTED`,
    and ``sql`` reads its result."""


@cache
def riding(sql: str, ctes: str = "") -> str:
    """The token check's statement with a companion read (``CompanionRead``'s ``sql`` and ``ctes``)
    riding on it: the text :func:`check_token_with` sends."""
    # LATERAL on an uncorrelated subquery: the read keeps its own plan (its MATERIALIZED steps
    # start from their unique indexes) and runs once, beside the token's row
    head = f"WITH {ctes}\n" if ctes else ""
    return f"{head}SELECT a.*, q.* FROM ({ACCESS_SQL}) a LEFT JOIN LATERAL ({sql}) q ON true"


async def check_token(
    conn: AsyncConnection[Any], jti: str, *, vendor_id: int | None, write: bool, now: datetime
) -> VendorContext:
    """The caller behind token ``jti`` issued for ``vendor_id`` (its ``vid`` claim), or the refusal
    it gets. ``conn`` is in autocommit: one round trip, no BEGIN or COMMIT."""
    cursor = await conn.execute(ACCESS_SQL, bound(TokenCheck(jti=jti, vendor_id=vendor_id)), prepare=True)
    row = await cursor.fetchone()
    return caller_of(None if row is None else _access_row(row), vendor_id=vendor_id, write=write, now=now)


async def check_token_with(
    conn: AsyncConnection[Any], jti: str, read: CompanionRead, *, vendor_id: int | None, write: bool, now: datetime
) -> tuple[VendorContext, dict[str, Any] | None]:
    """:func:`check_token` and ``read`` in one statement: the caller, and the read's row by column
    name (None when it found none). The refusals are :func:`check_token`'s, in its order."""
    # the read's parameters and the check's (:class:`TokenCheck`'s fields), in one new dict
    params = bound(read.params)
    params["jti"], params["vendor_id"] = jti, vendor_id
    cursor = await conn.execute(riding(read.sql, read.ctes), params, prepare=True)
    row = await cursor.fetchone()
    # the token's columns come first, the read's after them: each part by its names
    access, values = (None, ()) if row is None else (_access_row(row), row[ACCESS_COLUMNS:])
    caller = caller_of(access, vendor_id=vendor_id, write=write, now=now)
    names = _names.get((read.sql, read.ctes))
    if names is None:
        # psycopg builds a Column object per column for ``description``: once per statement is enough
        assert cursor.description is not None
        names = _names[(read.sql, read.ctes)] = tuple(column.name for column in cursor.description[ACCESS_COLUMNS:])
    found = dict(zip(names, values, strict=True))
    # the read's first column is never null on a row it found
    return caller, found if found[names[0]] is not None else None


_names: dict[tuple[str, str], tuple[str, ...]] = {}


def caller_of(row: AccessRow | None, *, vendor_id: int | None, write: bool, now: datetime) -> VendorContext:
    """The rules over the row ``ACCESS_SQL`` read (None when no token has that id)."""
    if row is None or row.token_revoked or row.client_revoked_at is not None:
        raise e.Unauthenticated("The access token is revoked or unknown.")
    if row.token_expires_at <= now:
        raise e.Unauthenticated("The access token has expired.")
    if vendor_id is None:
        if row.platform:
            raise e.VendorContextRequired("This endpoint needs a vendor and the token carries none.")
        raise e.InvalidClient("The token's client belongs to no vendor; a new token does not help.")
    if CLIENT_CREDENTIALS not in row.grant_types:
        raise e.InvalidClient("The token's client may no longer use the client credentials grant.")
    scopes = tuple(row.scopes)
    check_scope(scopes, write=write)
    if row.vendor_id is None or row.client_vendor_id != row.vendor_id:
        raise e.VendorContextMissing("The token resolved to no vendor.")
    check_vendor_state(
        VendorState(row.vendor_status, row.suspended_grace_until, row.subscription_ends_at), now, write=write
    )
    branch = None
    if row.branch_id:
        branch = BranchRef(row.branch_id, row.branch_external_id, row.branch_name, row.branch_type, row.branch_active)
    return VendorContext(
        vendor_id=row.vendor_id,
        api_client_id=row.api_client_id,
        client_id=row.client_id,
        scopes=scopes,
        plan=row.plan,
        points_expire_after_days=row.points_expire_after_days,
        default_branch=branch,
    )


VENDOR_STATE_SQL = SQL(
    "vendor_state",
    """
SELECT v.status, v.suspended_grace_until, v.subscription_ends_at, p.rate_limit_per_minute
FROM vendors v JOIN plans p ON p.id = v.plan_id
WHERE v.id = %(vendor_id)s
""",
    VendorScope,
)


async def vendor_state(conn: AsyncConnection[Any], vendor_id: int) -> tuple[VendorState, int] | None:
    """A vendor's state and plan rate limit, for the rate limiter's brief cache (autocommit read)."""
    async with conn.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(VENDOR_STATE_SQL, bound(VendorScope(vendor_id=vendor_id)), prepare=True)
        row = await cursor.fetchone()
    if row is None:
        return None
    state = VendorState(row["status"], row["suspended_grace_until"], row["subscription_ends_at"])
    return state, int(row["rate_limit_per_minute"])
