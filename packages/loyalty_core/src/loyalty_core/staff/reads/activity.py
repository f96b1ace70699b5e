"""The shop's activity (PORTAL-15): who did what, newest first, from the records the writes already
keep: the ledger's adjustments, counter gifts and cancels with their causer (LEDGER-6), the events
of merges and anonymizations, the consent decisions with their recorder (CONSENT-2), and the shop's
users and API clients as they were added (and the clients revoked). Who made a merge, an
anonymization, a user or a client in the portal, and the users invited and changed there, come from
the portal's own record (``portal_activity``, PORTAL-24); the rest was done through the API (merges,
anonymizations) or by the operator (users and clients made with the admin API).

Each source is read through an index on the shop and the time (partial indexes on the ledger and
the events hold only the rows listed here, so a till's purchase pays nothing for them), at most a
page and one more row each, and the sources are merged by time. A page is named by the time of the
last row shown and how many rows at exactly that time were shown, so rows written in one
transaction (a merge's entries) are never skipped at a page's edge."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.events.models import EVENT_ACTIVITY, EventType
from loyalty_core.staff.models import PortalAction
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
_PEOPLE = f"""
SELECT id, 'user_added' AS kind, created_at AS at, email AS name, role, active FROM users
WHERE vendor_id = :vendor_id AND created_at <= :before
UNION ALL
SELECT id, 'client_added', created_at, name, NULL, NULL FROM api_clients
WHERE vendor_id = :vendor_id AND created_at <= :before
UNION ALL
SELECT id, '{PortalAction.CLIENT_REVOKED}', revoked_at, name, NULL, NULL FROM api_clients
WHERE vendor_id = :vendor_id AND revoked_at IS NOT NULL AND revoked_at <= :before
ORDER BY at DESC, id DESC LIMIT :limit
"""

# the portal's records that are lines of their own (no other row tells of an invitation or a change)
_RECORDS = f"""
SELECT id, at, user_id, action, detail FROM portal_activity
WHERE vendor_id = :vendor_id AND action IN ('{PortalAction.USER_INVITED}', '{PortalAction.USER_CHANGED}')
AND at <= :before ORDER BY at DESC, id DESC LIMIT :limit
"""
# who made the page's merges, anonymizations, users and clients in the portal: a shop's record of
# them is a few rows per person and day, read through its (vendor_id, at) index
_ON_CUSTOMERS = f"'{PortalAction.CUSTOMERS_MERGED}', '{PortalAction.CUSTOMER_ANONYMIZED}'"
_ON_CLIENTS = f"'{PortalAction.CLIENT_CREATED}', '{PortalAction.CLIENT_REVOKED}'"
_ACTORS = f"""
SELECT action, coalesce(customer_id, subject_id) AS subject, user_id FROM portal_activity
WHERE vendor_id = :vendor_id AND (
    (action IN ({_ON_CUSTOMERS}) AND customer_id = ANY(:customers))
    OR (action = '{PortalAction.USER_JOINED}' AND subject_id = ANY(:users))
    OR (action IN ({_ON_CLIENTS}) AND subject_id = ANY(:clients)))
"""
THROUGH_THE_API = "through the API"
OPERATOR = "the operator"
ACTED_ON = {
    EventType.CUSTOMER_MERGED: PortalAction.CUSTOMERS_MERGED,
    EventType.CUSTOMER_ANONYMIZED: PortalAction.CUSTOMER_ANONYMIZED,
    "user_added": PortalAction.USER_JOINED,
    "client_added": PortalAction.CLIENT_CREATED,
    "client_revoked": PortalAction.CLIENT_REVOKED,
}
"""The portal's record that names who did what a line of another source tells."""


@dataclass(frozen=True, slots=True)
class Happening:
    """One line of the activity: when, who, what, and the customer it concerns (if any)."""

    at: datetime
    who: str
    what: str
    customer_id: int | None = None
    order: tuple[int, int] = (0, 0)
    """(source, row id): the order of lines at one instant, the same on every page."""
    acted_on: tuple[str, int] | None = None
    """(the portal's action, the customer, user or client row): the key of the portal's record of who
    did it, for a line whose own source does not say."""
    actor_id: int | None = None
    """The portal user who acted, for a line of the portal's own record."""


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
    records = (await session.execute(text(_RECORDS), params)).mappings().all()
    names = await causer_names(session, vendor_id, {(r["causer_type"], r["causer_id"]) for r in ledger})
    recorders = await user_emails(session, vendor_id, {n for r in consents if (n := _recorder_id(r["recorded_by"]))})
    lines = [_ledger_line(r, names) for r in ledger]
    lines += [_event_line(r) for r in events]
    lines += [_consent_line(r, recorders) for r in consents]
    lines += [_people_line(r) for r in people]
    lines += [_record_line(r) for r in records]
    lines.sort(key=lambda h: (h.at, h.order), reverse=True)
    at_edge = {id(h) for h in [h for h in lines if h.at == before][:seen]}
    lines = [h for h in lines if id(h) not in at_edge]
    shown, more = await _with_actors(session, vendor_id, lines[:limit]), len(lines) > limit
    named = await _people_of(session, vendor_id, shown)
    if not more or not shown:
        return ActivityPage(shown, None, 0, named)
    last = shown[-1].at
    same = sum(1 for h in shown if h.at == last)
    return ActivityPage(shown, last, same + (seen if last == before else 0), named)


async def _with_actors(session: AsyncSession, vendor_id: int, lines: list[Happening]) -> list[Happening]:
    """The page's lines with the portal user named who made, in the portal, what another source tells
    (one read of the portal's record by the page's keys, one of the users' emails)."""
    keyed = [h.acted_on for h in lines if h.acted_on is not None]
    actors: dict[tuple[str, int], int] = {}
    if keyed:
        wanted = {
            "customers": [
                n for a, n in keyed if a in (PortalAction.CUSTOMERS_MERGED, PortalAction.CUSTOMER_ANONYMIZED)
            ],
            "users": [n for a, n in keyed if a == PortalAction.USER_JOINED],
            "clients": [n for a, n in keyed if a in (PortalAction.CLIENT_CREATED, PortalAction.CLIENT_REVOKED)],
        }
        found = (await session.execute(text(_ACTORS), {"vendor_id": vendor_id, **wanted})).mappings().all()
        actors = {(r["action"], int(r["subject"])): int(r["user_id"]) for r in found if r["user_id"] is not None}
    user_ids = set(actors.values()) | {h.actor_id for h in lines if h.actor_id is not None}
    emails = await user_emails(session, vendor_id, user_ids) if user_ids else {}
    named = []
    for h in lines:
        if h.acted_on is not None and h.acted_on in actors:
            h = replace(h, who=emails.get(actors[h.acted_on], "a former user"))
        elif h.actor_id is not None:
            h = replace(h, who=emails.get(h.actor_id, "a former user"))
        named.append(h)
    return named


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
    key = (ACTED_ON[row["type"]], int(row["customer_id"])) if row["customer_id"] is not None else None
    return Happening(row["at"], THROUGH_THE_API, what, row["customer_id"], (3, 0), key)


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
    return Happening(row["at"], OPERATOR, what, None, (1, int(row["id"]) * 2 + rank), (ACTED_ON[kind], int(row["id"])))


def _record_line(row: Any) -> Happening:
    """An invitation or a change of a user, as the portal recorded it; ``who`` is named by the page's
    read of the users."""
    actor = int(row["user_id"]) if row["user_id"] is not None else None
    return Happening(row["at"], "a former user", row["detail"], None, (0, int(row["id"])), actor_id=actor)
