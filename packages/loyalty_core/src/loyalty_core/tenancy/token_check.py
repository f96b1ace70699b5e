"""The token check every vendor request makes, as one prepared statement on the request's connection.

Spec Authentication, rules 5 to 7, and contract 5 "Access": a revoked token or client is refused on
its very next request in every process, so the check reads the token's row each time; everything the
request needs about its caller (client, vendor state, plan, default branch) comes back in that one
indexed read, which starts from the unique index on ``issued_tokens.jti``. It runs through psycopg
directly, prepared on the connection, with no ORM or SQL compilation on the way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from psycopg import AsyncConnection

from loyalty_core.tenancy import errors as e
from loyalty_core.tenancy.access import (
    CLIENT_CREDENTIALS,
    BranchRef,
    PlanLimits,
    VendorContext,
    VendorState,
    check_scope,
    check_vendor_state,
)

ACCESS_SQL = """
SELECT t.revoked, t.expires_at,
       c.id, c.client_id, c.revoked_at, c.vendor_id, c.scopes, c.grant_types, c.platform,
       v.id, v.status, v.suspended_grace_until, v.subscription_ends_at, v.points_expire_after_days,
       p.max_transactions, p.max_customers, p.max_rewards, p.max_campaigns, p.max_locations,
       p.rate_limit_per_minute, p.overage_percent,
       p.feature_campaigns, p.feature_customer_moments, p.feature_point_expiry,
       b.id, b.external_id, b.name, b.type, b.active
FROM issued_tokens t
JOIN api_clients c ON c.id = t.api_client_id
LEFT JOIN vendors v ON v.id = %(v)s
LEFT JOIN plans p ON p.id = v.plan_id
LEFT JOIN branches b ON b.id = c.default_branch_id
WHERE t.jti = %(jti)s
"""
ACCESS_COLUMNS = 29


@dataclass(frozen=True, slots=True)
class CompanionRead:
    """A statement that rides on the token check's round trip: a read, or a write (``ctes``) whose
    WHERE holds :data:`~loyalty_core.tenancy.access.WRITE_ADMITTED`.

    ``sql`` selects at most one row of the caller's vendor, named ``%(v)s`` (the token's claimed
    vendor: the check refuses the request unless the token's client belongs to it), with a first
    column that is never null on a row it finds; ``params`` are its other parameters. The read runs
    whatever the check decides, and its row is handed over only when the check admits the caller,
    so a refused token learns nothing from it.
    """

    sql: str
    params: Mapping[str, Any]
    ctes: str = ""
    """Common table expressions the statement starts with: a data-modifying one (which PostgreSQL
    takes only at the top), whose WHERE holds :data:`~loyalty_core.tenancy.access.WRITE_ADMITTED`,
    and ``sql`` reads its result."""


@cache
def _with_access(sql: str, ctes: str) -> str:
    # LATERAL on an uncorrelated subquery: the read keeps its own plan (its MATERIALIZED steps
    # start from their unique indexes) and runs once, beside the token's row
    head = f"WITH {ctes}\n" if ctes else ""
    return f"{head}SELECT a.*, q.* FROM ({ACCESS_SQL}) a LEFT JOIN LATERAL ({sql}) q ON true"


async def check_token(
    conn: AsyncConnection[Any], jti: str, *, vendor_id: int | None, write: bool, now: datetime
) -> VendorContext:
    """The caller behind token ``jti`` issued for ``vendor_id`` (its ``vid`` claim), or the refusal
    the spec gives. ``conn`` is in autocommit: one round trip, no BEGIN or COMMIT."""
    cursor = await conn.execute(ACCESS_SQL, {"jti": jti, "v": vendor_id}, prepare=True)
    row = await cursor.fetchone()
    return caller_of(row, vendor_id=vendor_id, write=write, now=now)


async def check_token_with(
    conn: AsyncConnection[Any], jti: str, read: CompanionRead, *, vendor_id: int | None, write: bool, now: datetime
) -> tuple[VendorContext, dict[str, Any] | None]:
    """:func:`check_token` and ``read`` in one statement: the caller, and the read's row by column
    name (None when it found none). The refusals are :func:`check_token`'s, in its order."""
    params = {**read.params, "jti": jti, "v": vendor_id}
    cursor = await conn.execute(_with_access(read.sql, read.ctes), params, prepare=True)
    row = await cursor.fetchone()
    caller = caller_of(row, vendor_id=vendor_id, write=write, now=now)
    assert row is not None  # caller_of refuses a missing token
    if row[ACCESS_COLUMNS] is None:
        return caller, None
    names = _names.get((read.sql, read.ctes))
    if names is None:
        # psycopg builds a Column object per column for ``description``: once per statement is enough
        assert cursor.description is not None
        names = _names[(read.sql, read.ctes)] = tuple(column.name for column in cursor.description[ACCESS_COLUMNS:])
    return caller, dict(zip(names, row[ACCESS_COLUMNS:], strict=True))


_names: dict[tuple[str, str], tuple[str, ...]] = {}


def caller_of(row: Any, *, vendor_id: int | None, write: bool, now: datetime) -> VendorContext:
    """The rules over the row ``ACCESS_SQL`` read (None when no token has that id)."""
    if row is None or row[0] or row[4] is not None:
        raise e.Unauthenticated("The access token is revoked or unknown.")
    if row[1] <= now:
        raise e.Unauthenticated("The access token has expired.")
    if vendor_id is None:
        if row[8]:
            raise e.VendorContextRequired("This endpoint needs a vendor and the token carries none.")
        raise e.InvalidClient("The token's client belongs to no vendor; a new token does not help.")
    if CLIENT_CREDENTIALS not in row[7]:
        raise e.InvalidClient("The token's client may no longer use the client credentials grant.")
    scopes = tuple(row[6])
    check_scope(scopes, write=write)
    if row[9] is None or row[5] != row[9]:
        raise e.VendorContextMissing("The token resolved to no vendor.")
    check_vendor_state(VendorState(row[10], row[11], row[12]), now, write=write)
    branch = BranchRef(id=row[24], external_id=row[25], name=row[26], type=row[27], active=row[28]) if row[24] else None
    return VendorContext(
        vendor_id=row[9],
        api_client_id=row[2],
        client_id=row[3],
        scopes=scopes,
        plan=PlanLimits(
            max_transactions=row[14],
            max_customers=row[15],
            max_rewards=row[16],
            max_campaigns=row[17],
            max_locations=row[18],
            rate_limit_per_minute=row[19],
            overage_percent=row[20],
            campaigns=row[21],
            customer_moments=row[22],
            point_expiry=row[23],
        ),
        points_expire_after_days=row[13],
        default_branch=branch,
    )


VENDOR_STATE_SQL = """
SELECT v.status, v.suspended_grace_until, v.subscription_ends_at, p.rate_limit_per_minute
FROM vendors v JOIN plans p ON p.id = v.plan_id
WHERE v.id = %(v)s
"""


async def vendor_state(conn: AsyncConnection[Any], vendor_id: int) -> tuple[VendorState, int] | None:
    """A vendor's state and plan rate limit, for the rate limiter's brief cache (autocommit read)."""
    cursor = await conn.execute(VENDOR_STATE_SQL, {"v": vendor_id}, prepare=True)
    row = await cursor.fetchone()
    if row is None:
        return None
    return VendorState(row[0], row[1], row[2]), int(row[3])
