"""The back office's reads from a shell: ``loyalty plans|vendors|clients|branches|rewards list`` and
``show``, and ``loyalty vendors usage``.

Like the create verbs they call the running service's admin API with the admin token. They print
plain aligned text for a person (a table for a list, one ``field  value`` line per field for a
read) or, with ``--json``, the answer's ``data`` for a script.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote, urlencode

from loyalty_api import backoffice
from loyalty_api.settings import Settings

COLUMNS = {
    "plans": ("id", "name", "max_transactions", "max_customers", "max_rewards", "max_campaigns", "selectable"),
    "vendors": ("id", "name", "status", "plan_id", "code_prefix"),
    "clients": ("client_id", "name", "scopes", "default_branch", "revoked"),
    "branches": ("external_id", "name", "type", "active"),
    "rewards": ("id", "name", "type", "status", "point_cost", "remaining_stock"),
}
"""The columns of each list's table: enough to find a row; ``show`` prints every field."""


def add_verbs(areas: dict[str, Any]) -> None:
    """The read verbs, beside the create verbs in ``areas`` (the action parsers by area)."""
    plans = areas["plans"]
    _list(plans, "plans", "plans, oldest first", lambda a: "/admin/v1/plans")
    _show(plans, "a plan", lambda a: f"/admin/v1/plans/{_part(a.id)}").add_argument("id", help="the plan's id")

    vendors = areas["vendors"]
    listed = _list(vendors, "vendors", "vendors, oldest first", lambda a: "/admin/v1/vendors", ("status", "q"))
    listed.add_argument("--status", choices=("pending", "active", "inactive", "suspended", "deactivated"))
    listed.add_argument("--q", metavar="TEXT", help="a part of the name (case and accents aside)")
    _show(vendors, "a vendor", lambda a: f"/admin/v1/vendors/{_part(a.id)}").add_argument("id", help="the vendor's id")
    usage = _read(
        vendors,
        "usage",
        "a vendor's use of its plan this month (UTC), beside each limit (0: unlimited)",
        lambda a: f"/admin/v1/vendors/{_part(a.id)}/usage",
    )
    usage.add_argument("id", help="the vendor's id")

    clients = areas["clients"]
    _vendor(_list(clients, "clients", "a vendor's OAuth clients (never their secrets)", _of_vendor("clients")))
    _show(
        clients, "an OAuth client (never its secret)", lambda a: f"/admin/v1/clients/{_part(a.client_id)}"
    ).add_argument("client_id", help="the client's client_id (cl_...)")

    branches = areas["branches"]
    _vendor(_list(branches, "branches", "a vendor's branches", _of_vendor("branches")))
    branch = _vendor(_show(branches, "a branch", lambda a: _of_vendor("branches")(a) + f"/{_part(a.external_id)}"))
    branch.add_argument("external_id", help="the branch's external_id")

    rewards = areas["rewards"]
    reward_list = _vendor(
        _list(rewards, "rewards", "a vendor's rewards, every status", _of_vendor("rewards"), ("status",))
    )
    reward_list.add_argument("--status", choices=("active", "inactive"))
    reward = _vendor(_show(rewards, "a reward", lambda a: _of_vendor("rewards")(a) + f"/{_part(a.id)}"))
    reward.add_argument("id", help="the reward's id")


def _part(value: str) -> str:
    return quote(str(value), safe="")


def _of_vendor(what: str) -> Callable[[argparse.Namespace], str]:
    return lambda a: f"/admin/v1/vendors/{_part(a.vendor_id)}/{what}"


def _vendor(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--vendor-id", required=True, help="the vendor's id")
    return parser


def _read(actions: Any, verb: str, what: str, path: Callable[[argparse.Namespace], str]) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = actions.add_parser(
        verb,
        help=what,
        description=f"{what[0].upper()}{what[1:]}. Calls the running service's admin API with the admin token.",
    )
    parser.add_argument("--url", help="the service's address (default LOYALTY_PUBLIC_URL)")
    parser.add_argument("--json", action="store_true", help="print the answer's data as JSON")
    parser.set_defaults(run=lambda settings, args, send=None: _print_answer(settings, args, send, path(args), _fields))
    return parser


def _show(actions: Any, what: str, path: Callable[[argparse.Namespace], str]) -> argparse.ArgumentParser:
    return _read(actions, "show", f"show {what}", path)


def _list(
    actions: Any,
    area: str,
    what: str,
    path: Callable[[argparse.Namespace], str],
    filters: Sequence[str] = (),
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = actions.add_parser(
        "list",
        help=f"list {what}",
        description=f"List {what}, one page at a time. Calls the running service's admin API with the admin token.",
    )
    parser.add_argument("--page", type=int, default=1, metavar="N")
    parser.add_argument("--per-page", type=int, default=15, metavar="N", help="1 to 100 (default 15)")
    parser.add_argument("--url", help="the service's address (default LOYALTY_PUBLIC_URL)")
    parser.add_argument("--json", action="store_true", help="print the answer's data (items, links, meta) as JSON")

    def run(settings: Settings, args: argparse.Namespace, send: backoffice.Send | None = None) -> int:
        query = {"page": args.page, "per_page": args.per_page}
        query.update({f: getattr(args, f) for f in filters if getattr(args, f) is not None})
        columns = COLUMNS[area]
        return _print_answer(settings, args, send, f"{path(args)}?{urlencode(query)}", lambda d: _page(columns, d))

    parser.set_defaults(run=run)
    return parser


def _print_answer(
    settings: Settings,
    args: argparse.Namespace,
    send: backoffice.Send | None,
    path: str,
    text: Callable[[dict[str, Any]], list[str]],
) -> int:
    """One GET, printed as ``--json`` asks (the answer's data) or as ``text`` lays it out for a person."""
    status, data = backoffice.request(settings, args, send, "GET", path, None)
    if status != 0:
        return status
    lines = [json.dumps(data, indent=2)] if args.json else text(data)
    for line in lines:
        print(line)
    return 0


def _fields(data: dict[str, Any]) -> list[str]:
    width = max((len(k) for k in data), default=0)
    return [f"{key.ljust(width)}  {cell(value)}" for key, value in data.items()]


def _page(columns: Sequence[str], data: dict[str, Any]) -> list[str]:
    items, meta = data.get("data", []), data.get("meta", {})
    last = f"page {meta.get('current_page')} of {meta.get('last_page')}, {meta.get('total')} in all"
    return [*table(columns, items), last]


def cell(value: Any) -> str:
    """A value as a person reads it: "-" for none, yes/no, lists joined by commas."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ",".join(cell(v) for v in value) or "-"
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def table(columns: Sequence[str], items: Sequence[dict[str, Any]]) -> list[str]:
    """A header and one line per item, each column as wide as its widest cell."""
    rows = [list(columns), *([cell(item.get(c)) for c in columns] for item in items)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(columns))]
    return ["  ".join(text.ljust(w) for text, w in zip(row, widths, strict=True)).rstrip() for row in rows]
