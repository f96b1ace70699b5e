"""A till's verify and read of a confirmation code as prepared psycopg statements, in autocommit on
the request's connection: no ORM, no BEGIN, no COMMIT (REDEEM-8, REDEEM-9,
REDEEM-14).

Verify is one statement: a data-modifying CTE moves the code from valid to used, re-checking the
state, the clock and the customer (an anonymized customer's code never verifies) in its WHERE, so
exactly one of any number of concurrent verifies moves it; the same statement reads the row and its
branch, so a success is answered without another round trip; riding on the token check
(``verify_riding``), the whole request is that one statement. When nothing moved, the refusal is
read from the row as the statement's snapshot saw it. Under READ COMMITTED that snapshot predates
any write the update waited for: a verify that queued behind a concurrent verify (or a cancel) on
the row's lock sees the row still valid in its own SELECT while the update, re-checking the
committed row, moved nothing. So a row that looks valid and unexpired but did not move is read
again in a second statement (a fresh snapshot, after that write committed) before the refusal is
chosen; only a code that still looks verifiable then answers VERIFICATION_FAILED.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from loyalty_core.customers.models import CustomerStatus
from loyalty_core.errors import RuleViolation
from loyalty_core.events.recording import deliveries_of, new_event_id
from loyalty_core.redemptions import errors as e
from loyalty_core.redemptions.models import StoredStatus, status_at
from loyalty_core.redemptions.used_event import MOVED_COLUMNS, NAME, USED_CTES
from loyalty_core.tenancy.access import WRITE_ADMITTED
from loyalty_core.tenancy.token_check import CompanionRead, TokenCheck, riding
from loyalty_core.till_sql import Params, bound, statements_of

SQL = statements_of(__name__)


class Code(Params, frozen=True):
    """A code's read: its vendor and the code (upper case, as stored)."""

    vendor_id: int
    code: str


class Verify(Params, frozen=True):
    """The verify's own parameters; its vendor is the token check's (or the caller's)."""

    code: str
    now: datetime
    used_event_id: str
    """The id its ``redemption.used`` event gets, should the code move."""


class VerifyAlone(Verify, frozen=True):
    """The verify sent on its own: its own parameters and its vendor."""

    vendor_id: int


@dataclass(frozen=True, slots=True)
class BranchLabel:
    external_id: str
    name: str
    type: str


@dataclass(frozen=True, slots=True)
class RedemptionView:
    """A redemption as the wire shows it, ``status`` as stored."""

    id: int
    confirmation_code: str
    status: str
    reward_id: int
    reward_name: str
    reward_type: str
    customer_id: int
    points_deducted: int
    branch: BranchLabel | None
    redeemed_at: datetime
    expires_at: datetime | None
    used_at: datetime | None
    cancelled_at: datetime | None
    discount_type: str | None
    discount_value: int | None
    product_reference: str | None
    payment_amount: int

    def shown_status(self, now: datetime) -> str:
        return status_at(self.status, self.expires_at, now)


# status and used_at come from the update when it moved the row: the outer SELECT reads the
# statement's snapshot, which is from before the update.
_SHOWN = """r.id, r.confirmation_code, {status} AS status, r.reward_id, r.reward_name, r.reward_type,
       r.customer_id, r.points_deducted, b.external_id AS branch_key, b.name AS branch_name,
       b.type AS branch_type, r.redeemed_at, r.expires_at,
       {used_at} AS used_at, r.cancelled_at, r.discount_type, r.discount_value, r.product_reference,
       r.payment_amount"""

_FROM = """FROM redemptions r
LEFT JOIN branches b ON b.vendor_id = r.vendor_id AND b.id = r.branch_id"""

_WHERE = "WHERE r.vendor_id = %(vendor_id)s AND r.confirmation_code = %(code)s"

_READ = SQL("read", "\n".join(("SELECT " + _SHOWN.format(status="r.status", used_at="r.used_at"), _FROM, _WHERE)), Code)

# CUSTOMER-12: an anonymized customer is excluded from all API responses
_READ_SHOWN = SQL(
    "read_shown",
    _READ
    + f"""
  AND EXISTS (
      SELECT 1 FROM customers c
      WHERE c.vendor_id = r.vendor_id AND c.id = r.customer_id AND c.status <> '{CustomerStatus.ANONYMIZED}'
  )""",
    Code,
)

_MOVED = f"""moved AS (
    UPDATE redemptions r SET status = '{StoredStatus.USED}', used_at = %(now)s, updated_at = %(now)s
    WHERE r.vendor_id = %(vendor_id)s AND r.confirmation_code = %(code)s AND r.status = '{StoredStatus.VALID}'
      AND (r.expires_at IS NULL OR r.expires_at > %(now)s)
      AND EXISTS (
          SELECT 1 FROM customers c
          WHERE c.vendor_id = r.vendor_id AND c.id = r.customer_id AND c.status <> '{CustomerStatus.ANONYMIZED}'
      ){{gate}}
    RETURNING {MOVED_COLUMNS}
), {USED_CTES}"""

_DELIVERIES = f"{deliveries_of(NAME)} AS deliveries"

_MOVED_SHOWN = "\n".join(
    (
        _SHOWN.format(status="coalesce(m.status, r.status)", used_at="coalesce(m.used_at, r.used_at)"),
        _FROM,
        "LEFT JOIN moved m ON m.id = r.id",
        _WHERE,
    )
)

_VERIFY = SQL(
    "verify",
    f"WITH {_MOVED.format(gate='')}\nSELECT m.id IS NOT NULL AS moved, {_DELIVERIES}, {_MOVED_SHOWN}",
    VerifyAlone,
)

# the same verify riding on the token check: it moves the code only for a caller the check admits
_RIDING_CTES = _MOVED.format(gate=f"\n      AND {WRITE_ADMITTED}")
_RIDING = f"SELECT {WRITE_ADMITTED} AS write_admitted, m.id IS NOT NULL AS moved, {_DELIVERIES}, {_MOVED_SHOWN}"
SQL("verify_riding", riding(_RIDING, _RIDING_CTES), Verify, TokenCheck)


def verify_riding(code: str, now: datetime) -> CompanionRead:
    """POST /redemptions/{code}/verify in the token check's statement (see ``verify_answer``)."""
    params = Verify(code=code.upper(), now=now, used_event_id=new_event_id(now))
    return CompanionRead(_RIDING, params, ctes=_RIDING_CTES)


async def verify_answer(
    conn: AsyncConnection[Any], vendor_id: int, code: str, row: dict[str, Any] | None, *, now: datetime
) -> tuple[RedemptionView, int]:
    """The answer to a verify that rode on the token check, whose caller the check admitted: its
        row (None: no such code of the vendor). When the write's condition was stricter than the check
        (a suspended vendor in its grace period), nothing moved and the verify is sent on its own. With
    the view, how many webhook deliveries its ``redemption.used`` event created (EVENT-5)."""
    if row is None:
        raise e.RedemptionNotFound("The vendor has no redemption with this code.", code=code)
    if not row["write_admitted"]:
        return await verify_code(conn, vendor_id, code, now=now)
    return await _outcome(conn, vendor_id, code, row, now)


async def read_code(conn: AsyncConnection[Any], vendor_id: int, code: str) -> RedemptionView:
    """GET /redemptions/{code}: the vendor's redemption with this code, any state; none of an
    anonymized customer."""
    found = await read_view(conn, vendor_id, code, sql=_READ_SHOWN)
    if found is None:
        raise e.RedemptionNotFound("The vendor has no redemption with this code.", code=code)
    return found


async def verify_code(
    conn: AsyncConnection[Any], vendor_id: int, code: str, *, now: datetime
) -> tuple[RedemptionView, int]:
    """valid -> used, once; otherwise the refusal, checked in the order: not found, used,
    cancelled, expired, any other reason (the customer was anonymized). The statement records the
    ``redemption.used`` event (EVENT-5); with the view, how many deliveries it created."""
    params = VerifyAlone(vendor_id=vendor_id, code=code.upper(), now=now, used_event_id=new_event_id(now))
    async with conn.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(_VERIFY, bound(params), prepare=True)
        row = await cursor.fetchone()
    if row is None:
        raise e.RedemptionNotFound("The vendor has no redemption with this code.", code=code)
    return await _outcome(conn, vendor_id, code, row, now)


async def _outcome(
    conn: AsyncConnection[Any], vendor_id: int, code: str, row: Mapping[str, Any], now: datetime
) -> tuple[RedemptionView, int]:
    """``row``: whether the code ``moved``, and the redemption as the statement saw it."""
    seen = view_of(row)
    if row["moved"]:
        return seen, int(row["deliveries"])
    if seen.shown_status(now) == StoredStatus.VALID:
        # the snapshot may predate a verify or cancel the update waited for: read the row as it is now
        seen = await read_view(conn, vendor_id, code) or seen
    raise _refusal(seen, now)


async def read_view(
    conn: AsyncConnection[Any], vendor_id: int, code: str, *, sql: str = _READ
) -> RedemptionView | None:
    async with conn.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(sql, bound(Code(vendor_id=vendor_id, code=code.upper())), prepare=True)
        row = await cursor.fetchone()
    return None if row is None else view_of(row)


def _refusal(seen: RedemptionView, now: datetime) -> RuleViolation:
    status, code = seen.shown_status(now), seen.confirmation_code
    if status == StoredStatus.USED:
        return e.CodeAlreadyUsed("The code was already verified.", code=code)
    if status == StoredStatus.CANCELLED:
        return e.CodeCancelled("The redemption was cancelled.", code=code)
    if status == "expired":
        return e.CodeExpired("The code expired before it was verified.", code=code)
    return e.VerificationFailed("The code cannot be verified.", code=code)


def view_of(row: Mapping[str, Any]) -> RedemptionView:
    """A redemption read by these statements (or stored by the verify's event, ``used_event``)."""
    key = row["branch_key"]
    return RedemptionView(
        id=row["id"],
        confirmation_code=row["confirmation_code"],
        status=row["status"],
        reward_id=row["reward_id"],
        reward_name=row["reward_name"],
        reward_type=row["reward_type"],
        customer_id=row["customer_id"],
        points_deducted=row["points_deducted"],
        branch=BranchLabel(key, row["branch_name"], row["branch_type"]) if key is not None else None,
        redeemed_at=row["redeemed_at"].astimezone(UTC),
        expires_at=_utc(row["expires_at"]),
        used_at=_utc(row["used_at"]),
        cancelled_at=_utc(row["cancelled_at"]),
        discount_type=row["discount_type"],
        discount_value=row["discount_value"],
        product_reference=row["product_reference"],
        payment_amount=row["payment_amount"],
    )


def _utc(at: datetime | None) -> datetime | None:
    """In UTC as the ORM's columns read (``DateTimeUTC``), whatever the server's TimeZone setting."""
    return None if at is None else at.astimezone(UTC)
