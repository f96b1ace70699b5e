"""The back office's first steps from a shell: ``loyalty admin token``, ``loyalty plans create``,
``loyalty vendors create``, ``loyalty clients create``, ``loyalty users create`` (their reads are in
``backoffice_reads``).

The create verbs call the running service's admin API with the admin token, so they validate and
answer exactly as the API does (and work against the embedded database that ``loyalty serve``
holds open). They print the created ids as ``name=value`` lines a shell can read, and a client's
secret once.
"""

from __future__ import annotations

import argparse
import getpass
import http.client
import json
import socket
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

from loyalty_api.settings import Settings

Send = Callable[[str, str, dict[str, Any] | None, str], tuple[int, dict[str, Any]]]
"""(method, path, JSON body or None, admin token) -> (status, decoded answer)."""

FEATURES = ("campaigns", "customer_moments", "point_expiry", "tiers", "referrals", "campaign_mail")


def add_verbs(verbs: Any) -> dict[str, Any]:
    """The admin token and the create verbs; answers each area's action parsers, for the reads."""
    admin = verbs.add_parser("admin", help="the back office's admin token", description="The admin token.")
    admin_verbs = admin.add_subparsers(dest="admin_verb", required=True, metavar="ACTION")
    token = admin_verbs.add_parser(
        "token",
        help="print the admin token",
        description="Print the admin token: LOYALTY_ADMIN_TOKEN, else the one stored in LOYALTY_HOME "
        "(generated and stored now if there is none yet).",
    )
    token.set_defaults(run=_admin_token)

    plans = _area(verbs, "plans", "plans: what a vendor may do")
    plan = _create(plans, "a plan (zero means unlimited for every limit)", _create_plan)
    plan.add_argument("--name", required=True)
    for limit in ("max-transactions", "max-customers", "max-rewards", "max-campaigns", "max-locations"):
        plan.add_argument(f"--{limit}", type=int, default=0, metavar="N")
    plan.add_argument("--rate-limit-per-minute", type=int, default=0, metavar="N")
    plan.add_argument("--overage-percent", type=int, default=0, metavar="N")
    plan.add_argument("--feature", action="append", choices=FEATURES, default=[], help="repeat for several")

    vendors = _area(verbs, "vendors", "vendors: the shops and chains")
    vendor = _create(vendors, "a vendor on a plan", _create_vendor)
    vendor.add_argument("--name", required=True)
    vendor.add_argument("--plan-id", type=int, required=True)
    vendor.add_argument("--status", default="active", choices=("pending", "active", "inactive"))
    vendor.add_argument("--points-expire-after-days", type=int, metavar="DAYS")

    clients = _area(verbs, "clients", "OAuth clients: a till's or webshop's credentials")
    client = _create(clients, "an OAuth client of a vendor; its secret is printed once", _create_client)
    client.add_argument("--vendor-id", type=int, required=True)
    client.add_argument("--name", required=True)
    client.add_argument(
        "--scope",
        action="append",
        choices=("read", "write", "webhooks"),
        help="repeat for several (default: read and write); webhooks opens the events feed",
    )
    client.add_argument("--default-branch", metavar="EXTERNAL_ID")

    branches = _area(verbs, "branches", "branches: a vendor's stores and other locations")
    rewards = _area(verbs, "rewards", "rewards: what a vendor's customers spend points on")
    users = _area(verbs, "users", "portal users: the shop's own people who sign in at /portal")
    user = _create(
        users,
        "a portal user of a vendor; the password is asked for at a prompt, or read from the first line of "
        "standard input when that is not a terminal (never from an argument, so it stays out of the shell's "
        "history and the process list)",
        _create_user,
    )
    user.add_argument("--vendor-id", type=int, required=True)
    user.add_argument("--email", required=True)
    user.add_argument("--role", default="owner", choices=("owner", "staff"), help="default: owner")
    return {"plans": plans, "vendors": vendors, "clients": clients, "branches": branches, "rewards": rewards}


def _area(verbs: Any, name: str, about: str) -> Any:
    area = verbs.add_parser(name, help=about, description=about[0].upper() + about[1:] + ".")
    return area.add_subparsers(dest=f"{name}_verb", required=True, metavar="ACTION")


def _create(actions: Any, what: str, run: Callable[..., int]) -> argparse.ArgumentParser:
    create: argparse.ArgumentParser = actions.add_parser(
        "create",
        help=f"create {what}",
        description=f"Create {what}. Calls the running service's admin API with the admin token.",
    )
    create.add_argument("--url", help="the service's address (default LOYALTY_PUBLIC_URL)")
    create.add_argument("--json", action="store_true", help="print the whole answer as JSON")
    create.set_defaults(run=run)
    return create


def _admin_token(settings: Settings, args: argparse.Namespace) -> int:
    filled, _ = settings.with_secrets()
    print(filled.admin_token)
    return 0


def _create_plan(settings: Settings, args: argparse.Namespace, send: Send | None = None) -> int:
    body: dict[str, Any] = {
        "name": args.name,
        "max_transactions": args.max_transactions,
        "max_customers": args.max_customers,
        "max_rewards": args.max_rewards,
        "max_campaigns": args.max_campaigns,
        "max_locations": args.max_locations,
        "rate_limit_per_minute": args.rate_limit_per_minute,
        "overage_percent": args.overage_percent,
        "features": {f: f in args.feature for f in FEATURES},
    }
    return _call(settings, args, send, "/admin/v1/plans", body, ("id",), "plan_")


def _create_vendor(settings: Settings, args: argparse.Namespace, send: Send | None = None) -> int:
    body: dict[str, Any] = {"name": args.name, "plan_id": args.plan_id, "status": args.status}
    if args.points_expire_after_days is not None:
        body["points_expire_after_days"] = args.points_expire_after_days
    return _call(settings, args, send, "/admin/v1/vendors", body, ("id",), "vendor_")


def _create_client(settings: Settings, args: argparse.Namespace, send: Send | None = None) -> int:
    body: dict[str, Any] = {"name": args.name}
    if args.scope:
        body["scopes"] = sorted(set(args.scope))
    if args.default_branch:
        body["default_branch"] = args.default_branch
    path = f"/admin/v1/vendors/{args.vendor_id}/clients"
    code = _call(settings, args, send, path, body, ("client_id", "client_secret"), "")
    if code == 0:
        print("loyalty: the client secret is shown this once; store it now", file=sys.stderr)
    return code


def _create_user(settings: Settings, args: argparse.Namespace, send: Send | None = None, stdin: Any = None) -> int:
    password = read_password(stdin or sys.stdin)
    if password is None:
        print("loyalty: no password given", file=sys.stderr)
        return 2
    body: dict[str, Any] = {"email": args.email, "role": args.role, "password": password}
    return _call(settings, args, send, f"/admin/v1/vendors/{args.vendor_id}/users", body, ("id",), "user_")


def read_password(stdin: Any) -> str | None:
    """At a terminal, asked twice without echo; otherwise the first line of standard input."""
    if stdin.isatty():
        first = getpass.getpass("Password (at least 12 characters): ")
        if getpass.getpass("The same password again: ") != first:
            print("loyalty: the two passwords differ", file=sys.stderr)
            return None
        return first or None
    line: str = stdin.readline()
    return line.rstrip("\r\n") or None


def _call(
    settings: Settings,
    args: argparse.Namespace,
    send: Send | None,
    path: str,
    body: dict[str, Any],
    shown: tuple[str, ...],
    prefix: str,
) -> int:
    code, data = request(settings, args, send, "POST", path, body)
    if code != 0:
        return code
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        for name in shown:
            print(f"{prefix}{name}={data.get(name)}")
    return 0


def request(
    settings: Settings,
    args: argparse.Namespace,
    send: Send | None,
    method: str,
    path: str,
    body: dict[str, Any] | None,
) -> tuple[int, dict[str, Any]]:
    """One admin API call: (0, the answer's data), or the exit code after printing why it failed
    (1 refused by the API, 2 service unreachable)."""
    filled, _ = settings.with_secrets()
    base_url = (args.url or filled.public_url).rstrip("/")
    transport = send or http_sender(base_url)
    try:
        status, answer = transport(method, path, body, filled.admin_token or "")
    except (OSError, ValueError, http.client.HTTPException) as exc:
        print(f"loyalty: {unreachable(base_url, exc)}", file=sys.stderr)
        return 2, {}
    if status >= 300:
        error = answer.get("error", {})
        details = f" {json.dumps(error['details'])}" if error.get("details") else ""
        hint = ADMIN_TOKEN_HINT if status == 401 else ""
        print(f"loyalty: {status} {error.get('code', '')}: {error.get('message', '')}{details}{hint}", file=sys.stderr)
        return 1, {}
    data: dict[str, Any] = answer.get("data", {})
    return 0, data


ADMIN_TOKEN_HINT = "; the admin token (LOYALTY_ADMIN_TOKEN, else the one in LOYALTY_HOME) is not the service's"
URL_SETTING = "--url or LOYALTY_PUBLIC_URL"


def unreachable(base_url: str, exc: BaseException) -> str:
    """The one line for a service that did not answer as one: its address, why, and the setting."""
    reason = getattr(exc, "reason", exc)
    host = urllib.parse.urlsplit(base_url).hostname
    if isinstance(reason, socket.gaierror):
        return f"cannot reach the service at {base_url}: no host is known as {host!r}; set {URL_SETTING} to its address"
    if isinstance(exc, ValueError | http.client.HTTPException):  # some other server listens there
        return f"the answer from {base_url} is not the loyalty service's; set {URL_SETTING} to its address"
    text = getattr(reason, "strerror", None) or str(reason) or type(reason).__name__
    return (
        f"cannot reach the service at {base_url} ({text}); is `loyalty serve` running? Set {URL_SETTING} to its address"
    )


def http_sender(base_url: str) -> Send:
    def send(method: str, path: str, body: dict[str, Any] | None, token: str) -> tuple[int, dict[str, Any]]:
        request = urllib.request.Request(
            base_url + path,
            data=None if body is None else json.dumps(body).encode(),
            method=method,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as refused:
            try:
                return refused.code, json.loads(refused.read() or b"{}")
            except ValueError:
                return refused.code, {}

    return send
