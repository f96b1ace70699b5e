"""The campaign-mail audience counted at scale (``bench._scale_1m``'s campaign mail figures).

The generated customers consent to nothing and have no date of birth, so the clone is given both
first: consent (source ``import``) to ``share`` of each vendor's customers, spread over the ids, and
a date of birth to every customer, the months dealt out evenly. Then the core functions the portal
and the send call (``audience_count``: the draft page's live count; ``mailable_count``: the plan's
limit check) are timed in this process for each audience, and the tier rule's months
(``family_months``, the part of a tier audience read into Python) on their own.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from typing import Any

import psycopg

CONSENT = """
UPDATE customers SET marketing_consent = true, marketing_consent_source = 'import',
       marketing_consent_statement_version = 'scale', marketing_consent_granted_at = created_at
WHERE (id * 7919) %% 1000 < %(per_mille)s
"""
BIRTHDAYS = "UPDATE customers SET date_of_birth = date '1950-01-01' + ((id * 7919) % 20000)::int"


def give_consent(db: psycopg.Connection[Any], share: float) -> tuple[int, float]:
    """Consent for ``share`` of the customers and a date of birth for each; answers the consenting
    customers and the seconds the updates and the vacuum took."""
    began = time.monotonic()
    consenting = db.execute(CONSENT, {"per_mille": round(share * 1000)}).rowcount
    db.execute(BIRTHDAYS)
    db.execute("VACUUM (ANALYZE) customers")
    return consenting, time.monotonic() - began


@dataclass(frozen=True)
class Counted:
    vendor_id: int
    audience: str
    function: str
    count: int
    samples_ms: list[float]
    load: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """The load average when the samples were taken."""


AUDIENCES: list[tuple[str, dict[str, Any]]] = [
    ("default (every active customer)", {}),
    ("birthday in March", {"birthday_month": 3}),
    ("tiers gold, platinum", {"tiers": ("gold", "platinum")}),
    ("tiers gold, platinum and birthday in March", {"tiers": ("gold", "platinum"), "birthday_month": 3}),
    ("tier bronze (the first tier: everyone but the others)", {"tiers": ("bronze",)}),
    ("min_balance 500 and inactive 90 days", {"min_balance": 500, "inactive_days": 90}),
]


async def _count_all(
    url: str, vendors: list[int], repeats: int, with_months: bool
) -> tuple[list[Counted], dict[int, list[float]]]:
    from loyalty_core.clock import SystemClock
    from loyalty_core.db import make_engine, make_sessionmaker
    from loyalty_core.mailings.reads import audience_count, mailable_count
    from loyalty_core.mailings.rules import Audience
    from loyalty_core.tiers.reads import family_months, paying_ladder_of

    engine = make_engine(url)
    sessions = make_sessionmaker(engine)
    clock = SystemClock()
    out: list[Counted] = []
    months: dict[int, list[float]] = {}
    try:
        for vendor_id in vendors:
            for label, criteria in AUDIENCES:
                audience = Audience(**criteria)
                for name, function in (("audience_count", audience_count), ("mailable_count", mailable_count)):
                    samples: list[float] = []
                    count = 0
                    for _ in range(repeats):
                        async with sessions() as session:
                            began = time.perf_counter()
                            count = await function(session, vendor_id, audience, clock.now())
                            samples.append((time.perf_counter() - began) * 1000)
                    out.append(Counted(vendor_id, label, name, count, samples, os.getloadavg()))
                    print(f"scale-1m: vendor {vendor_id} {label} {name}: {count} in {sorted(samples)}", flush=True)
            if not with_months:
                continue
            months[vendor_id] = []
            for _ in range(repeats):
                async with sessions() as session:
                    ladder = await paying_ladder_of(session, vendor_id)
                    assert ladder is not None
                    began = time.perf_counter()
                    await family_months(session, vendor_id, ladder, clock.now())
                    months[vendor_id].append((time.perf_counter() - began) * 1000)
    finally:
        await engine.dispose()
    return out, months


def count_audiences(
    url: str, vendors: list[int], repeats: int, *, with_months: bool = True
) -> tuple[list[Counted], dict[int, list[float]]]:
    """Each audience of ``AUDIENCES`` counted ``repeats`` times per vendor and function, and, with
    ``with_months``, the tier rule's months read alone (ms)."""
    url = url.replace("postgresql://", "postgresql+psycopg://", 1)
    return asyncio.run(_count_all(url, vendors, repeats, with_months))
