"""The shop's activity (PORTAL-15): who did what, newest first, from the records the writes already
keep: the ledger's adjustments, counter gifts and cancels with their causer (LEDGER-6), the events
of merges and anonymizations, the consent decisions with their recorder (CONSENT-2), and the shop's
users and API clients as they were added (and the clients revoked).

Each source is read through an index on the shop and the time (partial indexes on the ledger and
the events hold only the rows listed here, so a till's purchase pays nothing for them), at most a
page and one more row each, and the sources are merged by time. A page is named by the time of the
last row shown and how many rows at exactly that time were shown, so rows written in one
transaction (a merge's entries) are never skipped at a page's edge."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.events.models import EVENT_ACTIVITY, EventType
from loyalty_core.staff.reads.people import causer_names, user_emails
from loyalty_core.wallet.models import LEDGER_ACTIVITY, CauserType, EntryType

MERGE_REASON = "merge"
CANCEL_REASON = "redemption_cancelled"

_LEDGER = f"""
SELECT e.id, e.created_at AS at, e.type, e.amount, e.reason, e.causer_type, e.causer_id, w.customer_id
FROM (SELECT * FROM ledger_entries WHERE vendor_id = :vendor_id AND ({LEDGER_ACTIVITY})
      AND created_at <= :before ORDER BY created_at DESC, id DESC LIMIT :limit) e
JOIN wallets w ON w.vendor_id = e.vendor_id AND w.id = e.wallet_id
ORDER BY e.created_at DESC, e.id DESC
"""
_EVENTS = f"""
SELECT id, created_at AS at, type, customer_id, data->>'merged_into_id' AS kept
FROM events WHERE vendor_id = :vendor_id AND {EVENT_ACTIVITY} AND created_at <= :before
ORDER BY created_at DESC, id DESC LIMIT :limit
"""
_CONSENT = """
SELECT id, moment AS at, customer_id, granted, source, recorded_by FROM consent_events
WHERE vendor_id = :vendor_id AND moment <= :before ORDER BY moment DESC, id DESC LIMIT :limit
"""
# a shop has a handful of users and clients: each row is at most two moments of the list (a user's
# ``updated_at`` moves at sign-ins too, so it is no record of a change)
_PEOPLE = """
SELECT id, 'user_added' AS kind, created_at AS at, email AS name, role, active FROM users
WHERE vendor_id = :vendor_id AND created_at <= :before
UNION ALL
SELECT id, 'client_added', created_at, name, NULL, NULL FROM api_clients
WHERE vendor_id = :vendor_id AND created_at <= :before
UNION ALL
SELECT id, 'client_revoked', revoked_at, name, NULL, NULL FROM api_clients
WHERE vendor_id = :vendor_id AND revoked_at IS NOT NULL AND revoked_at <= :before
ORDER BY at DESC, id DESC LIMIT :limit
"""


@dataclass(frozen=True, slots=True)
class Happening:
    """One line of the activity: when, who, what, and the customer it concerns (if any)."""

    at: datetime
    who: str
    what: str
    customer_id: int | None = None
    order: tuple[int, int] = (0, 0)
    """(source, row id): the order of lines at one instant, the same on every page."""


@dataclass(frozen=True, slots=True)
class Person:
    """How a page names a customer a line concerns (PORTAL-13)."""

    id: int
    first_name: str | None
    last_name: str | None
    email: str | None


@dataclass(frozen=True, slots=True)
class ActivityPage:
    lines: list[Happening]
    next_before: datetime | None
    """The next page's ``before`` (None: this is the last page) and how many lines at that instant
    this page and the ones before it showed."""
    next_seen: int
    people: dict[int, Person]
    """The customers the page's lines concern, by id (an anonymized one has no name or email)."""


_PEOPLE_NAMED = """
SELECT id, first_name, last_name, email FROM customers WHERE vendor_id = :vendor_id AND id = ANY(:ids)
"""


async def _people_of(session: AsyncSession, vendor_id: int, lines: list[Happening]) -> dict[int, Person]:
    """One read by the customers' keys for the page's lines, whatever the shop's size."""
    ids = sorted({h.customer_id for h in lines if h.customer_id is not None})
    if not ids:
        return {}
    found = (await session.execute(text(_PEOPLE_NAMED), {"vendor_id": vendor_id, "ids": ids})).mappings().all()
    return {int(r["id"]): Person(int(r["id"]), r["first_name"], r["last_name"], r["email"]) for r in found}


async def activity(
    session: AsyncSession, vendor_id: int, *, before: datetime, seen: int = 0, limit: int = 50
) -> ActivityPage:
    """The shop's lines at or before ``before``, newest first, leaving out the first ``seen`` lines
    at exactly ``before`` (shown on the pages before)."""
    params = {"vendor_id": vendor_id, "before": before, "limit": limit + seen + 1}
    ledger = (await session.execute(text(_LEDGER), params)).mappings().all()
    events = (await session.execute(text(_EVENTS), params)).mappings().all()
    consents = (await session.execute(text(_CONSENT), params)).mappings().all()
    people = (await session.execute(text(_PEOPLE), params)).mappings().all()
    names = await causer_names(session, vendor_id, {(r["causer_type"], r["causer_id"]) for r in ledger})
    recorders = await user_emails(session, vendor_id, {n for r in consents if (n := _recorder_id(r["recorded_by"]))})
    lines = [_ledger_line(r, names) for r in ledger]
    lines += [_event_line(r) for r in events]
    lines += [_consent_line(r, recorders) for r in consents]
    lines += [_people_line(r) for r in people]
    lines.sort(key=lambda h: (h.at, h.order), reverse=True)
    at_edge = {id(h) for h in [h for h in lines if h.at == before][:seen]}
    lines = [h for h in lines if id(h) not in at_edge]
    shown, more = lines[:limit], len(lines) > limit
    named = await _people_of(session, vendor_id, shown)
    if not more or not shown:
        return ActivityPage(shown, None, 0, named)
    last = shown[-1].at
    same = sum(1 for h in shown if h.at == last)
    return ActivityPage(shown, last, same + (seen if last == before else 0), named)


def _recorder_id(recorded_by: str) -> int | None:
    kind, _, number = recorded_by.partition(":")
    return int(number) if kind == CauserType.PORTAL_USER and number.isdigit() else None


def _ledger_line(row: Any, names: dict[tuple[str, str | None], str]) -> Happening:
    who = names[(row["causer_type"], row["causer_id"])]
    amount, reason = int(row["amount"]), row["reason"]
    if row["type"] == EntryType.REDEEM:
        what = f"gave a reward for {-amount} points"
    elif reason == MERGE_REASON:
        what = f"merged accounts: {amount:+d} points moved"
    elif reason == CANCEL_REASON:
        what = f"cancelled a redemption, {amount} points back"
    else:
        what = f"adjusted points by {amount:+d}" + (f" ({reason})" if reason else "")
    return Happening(row["at"], who, what, row["customer_id"], (4, int(row["id"])))


def _event_line(row: Any) -> Happening:
    if row["type"] == EventType.CUSTOMER_MERGED:
        what = f"merged the customer into customer #{row['kept']}" if row["kept"] else "merged the customer"
    else:
        what = "anonymized the customer"
    # an event's id sorts as its instant; its rank among lines of one instant is its source's
    return Happening(row["at"], "the shop", what, row["customer_id"], (3, 0))


def _consent_line(row: Any, recorders: dict[int, str]) -> Happening:
    number = _recorder_id(row["recorded_by"])
    who = recorders.get(number, "a former user") if number is not None else f"{row['source']} ({row['recorded_by']})"
    what = "recorded marketing consent" if row["granted"] else "recorded a withdrawal of marketing consent"
    return Happening(row["at"], who, what, row["customer_id"], (2, int(row["id"])))


def _people_line(row: Any) -> Happening:
    kind, name = row["kind"], row["name"]
    what = {
        "user_added": f"user {name} added as {row['role']}",
        "client_added": f"API client {name} created",
        "client_revoked": f"API client {name} revoked",
    }[kind]
    rank = {"user_added": 0, "client_added": 0, "client_revoked": 1}[kind]
    return Happening(row["at"], "the shop", what, None, (1, int(row["id"]) * 2 + rank))
