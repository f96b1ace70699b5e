"""How big the scale deployment is (``bench scale``'s options) and how each vendor's share is laid out.

One large vendor and many small ones. Each vendor's ledger is dealt out over its customers (the
large vendor's first customer holds ``heavy`` entries, the ledger page benchmarks' customer); every
small vendor has the large one's proportions at ``small_customers`` customers.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from dataclasses import asdict, dataclass, replace

GENERATOR_VERSION = 2
"""Raised whenever the generated rows change, so an older template is not reused."""


@dataclass(frozen=True)
class Sizes:
    customers: int = 1_000_000
    entries: int = 20_000_000
    transactions: int = 5_000_000
    redemptions: int = 500_000
    events: int = 2_000_000
    items_per_transaction: int = 2
    heavy: int = 5_000
    small_vendors: int = 200
    small_customers: int = 250
    months: int = 13
    expiry_days: int = 365

    def key(self) -> str:
        """A short hash naming these sizes (and the generator's version) in the template's name."""
        text = json.dumps({**asdict(self), "v": GENERATOR_VERSION}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:10]

    def check(self) -> None:
        if self.customers < 2 or self.heavy >= self.entries:
            raise ValueError("the large vendor needs 2 customers or more and more entries than its heavy customer")
        if self.transactions + self.redemptions > self.entries:
            raise ValueError("--transactions plus --redemptions must not exceed --entries")


SMALL = Sizes(
    customers=2_000,
    entries=40_000,
    transactions=10_000,
    redemptions=1_000,
    events=4_000,
    small_vendors=5,
    small_customers=50,
)
"""``--small``: the CI run and the migration-lock test's data; builds in seconds."""


@dataclass(frozen=True)
class Share:
    """One vendor's rows: ``customers``; the ``heavy`` customer's entries, purchases and redemptions;
    and the entries, purchases and redemptions of the others."""

    vendor_id: int
    first_customer: int
    customers: int
    heavy: int
    heavy_transactions: int
    heavy_redemptions: int
    entries: int
    transactions: int
    redemptions: int


def shares(sizes: Sizes) -> list[Share]:
    """The large vendor (id 1) then the small ones, customer ids handed out one vendor after another."""
    out: list[Share] = []
    first = 1
    for vendor_id in range(1, sizes.small_vendors + 2):
        large = vendor_id == 1
        customers = sizes.customers if large else sizes.small_customers
        ratio = 1.0 if large else customers / sizes.customers
        entries = round(sizes.entries * ratio)
        transactions = round(sizes.transactions * ratio)
        redemptions = round(sizes.redemptions * ratio)
        heavy = sizes.heavy if large else 0
        heavy_transactions = heavy * transactions // entries
        heavy_redemptions = heavy * redemptions // entries
        out.append(
            Share(
                vendor_id,
                first,
                customers,
                heavy,
                heavy_transactions,
                heavy_redemptions,
                entries - heavy,
                transactions - heavy_transactions,
                redemptions - heavy_redemptions,
            )
        )
        first += customers
    return out


def add_options(parser: argparse.ArgumentParser) -> None:
    default = Sizes()
    parser.add_argument("--small", action="store_true", help="the CI sizes (2,000 customers, 40,000 entries)")
    parser.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="multiply the large vendor's customers, entries, purchases, redemptions and events (0.25: a quarter)",
    )
    for name in ("customers", "entries", "transactions", "redemptions", "events", "small_vendors", "small_customers"):
        flag = "--" + name.replace("_", "-")
        parser.add_argument(flag, type=int, default=None, help=f"default {getattr(default, name):,}")
    parser.add_argument("--heavy", type=int, default=None, help="entries of the large vendor's first customer")


def sizes_of(options: argparse.Namespace) -> Sizes:
    base = SMALL if options.small else Sizes()
    if options.scale != 1.0:
        factor = options.scale
        base = replace(
            base,
            customers=int(base.customers * factor),
            entries=int(base.entries * factor),
            transactions=int(base.transactions * factor),
            redemptions=int(base.redemptions * factor),
            events=int(base.events * factor),
        )
    changes = {
        name: getattr(options, name)
        for name in (
            "customers",
            "entries",
            "transactions",
            "redemptions",
            "events",
            "small_vendors",
            "small_customers",
            "heavy",
        )
        if getattr(options, name) is not None
    }
    sizes = replace(base, **changes)
    sizes.check()
    return sizes
