"""Customer lookup by loyalty card among 1,000,000 customers.

Loads one vendor with 1,000,000 customers, each with a wallet, an email identifier and a card
(plus a second vendor, so the index is not one vendor's alone), then shows the query plan of
the exact statement ``CustomerService.reads.lookup`` runs for a card scanned in lower case, and the
latency of that lookup through the service. The plan must be index-backed: the run fails when
PostgreSQL reads ``customer_identifiers`` or ``customers`` sequentially.
"""

from __future__ import annotations

import asyncio
import random
import time

from bench._support import machine, percentiles, scratch_database, scratch_name

CUSTOMERS = 1_000_000
OTHER_VENDOR = 50_000
LOOKUPS = 2000
DATABASE = scratch_name("loyalty_bench_customers")


async def _measure() -> tuple[str, str, tuple[float, float], float]:
    from sqlalchemy import text

    from loyalty_core.accounts.customers import CustomerService
    from loyalty_core.accounts.till_lookup import BY_IDENTIFIER
    from loyalty_core.clock import SystemClock
    from loyalty_core.customers import cards
    from loyalty_core.db import make_engine, make_sessionmaker
    from loyalty_core.models import metadata

    engine = make_engine(scratch_database(DATABASE))
    async with engine.begin() as conn:
        await conn.run_sync(metadata.create_all)

    started = time.perf_counter()
    async with engine.begin() as conn:
        await conn.execute(
            text(
                "INSERT INTO plans (id, name, max_transactions, max_customers, max_rewards, max_campaigns,"
                " max_locations, rate_limit_per_minute, overage_percent, feature_campaigns,"
                " feature_customer_moments, feature_point_expiry, created_at, updated_at)"
                " VALUES (1, 'bench', 0, 0, 0, 0, 0, 0, 0, false, false, false, now(), now())"
            )
        )
        await conn.execute(
            text(
                "INSERT INTO vendors (id, name, plan_id, status, created_at, updated_at)"
                " VALUES (1, 'shop', 1, 'active', now(), now()), (2, 'other shop', 1, 'active', now(), now())"
            )
        )
        for vendor_id, count in ((1, CUSTOMERS), (2, OTHER_VENDOR)):
            await conn.execute(
                text(
                    "INSERT INTO customers (id, vendor_id, first_name, last_name, email, locale, status,"
                    " marketing_consent, created_at, updated_at)"
                    " SELECT nextval('customers_id_seq'), :v, 'First ' || g, 'Last ' || g,"
                    " 'Customer.' || g || '@shop' || :v || '.example', 'nl', 'active', false, now(), now()"
                    " FROM generate_series(1, :n) AS g"
                ),
                {"v": vendor_id, "n": count},
            )
        await conn.execute(
            text(
                "INSERT INTO wallets (id, vendor_id, customer_id, balance, created_at, updated_at)"
                " SELECT nextval('wallets_id_seq'), vendor_id, id, (id % 500)::int, now(), now() FROM customers"
            )
        )
        await conn.execute(
            text(
                "INSERT INTO customer_identifiers (id, vendor_id, customer_id, type, value, active, assigned_at,"
                " created_at, updated_at)"
                " SELECT nextval('customer_identifiers_id_seq'), vendor_id, id, 'email', lower(email), true,"
                " now(), now(), now() FROM customers"
            )
        )
        ids = (await conn.execute(text("SELECT vendor_id, id FROM customers ORDER BY id"))).all()
        codes = list(dict.fromkeys(cards.new_codes(len(ids) + 1000)))[: len(ids)]
        raw = await conn.get_raw_connection()
        driver = raw.driver_connection
        assert driver is not None
        first_id = int(await conn.scalar(text("SELECT max(id) FROM customer_identifiers")) or 0) + 1
        async with driver.cursor() as cursor:
            async with cursor.copy(
                "COPY customer_identifiers (id, vendor_id, customer_id, type, value, active, assigned_at,"
                " created_at, updated_at) FROM STDIN"
            ) as copy:
                for n, ((vendor_id, customer_id), code) in enumerate(zip(ids, codes, strict=True)):
                    await copy.write_row(
                        (first_id + n, vendor_id, customer_id, "loyalty_card", code, True, "now", "now", "now")
                    )
            await cursor.execute(
                "SELECT setval('customer_identifiers_id_seq', (SELECT max(id) FROM customer_identifiers))"
            )
    async with engine.connect() as conn:
        await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(text("VACUUM ANALYZE"))
    load_seconds = time.perf_counter() - started

    vendor_cards = [code for (vendor_id, _), code in zip(ids, codes, strict=True) if vendor_id == 1]
    probe = random.Random(7).choice(vendor_cards).lower()
    # the lookup's statement with the probe's values in place of its parameters
    sql = BY_IDENTIFIER.replace("%(vendor_id)s", "1").replace("%(identifier)s", f"'{probe}'")
    async with engine.connect() as conn:
        await conn.execute(text(f"EXPLAIN (ANALYZE, BUFFERS) {sql}"))  # warm the cache once
        plan = "\n".join(row[0] for row in await conn.execute(text(f"EXPLAIN (ANALYZE, BUFFERS, COSTS) {sql}")))
    for table in ("customer_identifiers", "customers", "wallets"):
        if f"Seq Scan on {table}" in plan:
            raise AssertionError(f"the card lookup reads {table} sequentially:\n{plan}")

    sessionmaker = make_sessionmaker(engine)
    chosen = random.Random(11).sample(vendor_cards, LOOKUPS + 200)
    samples = []
    for n, code in enumerate(chosen):
        async with sessionmaker() as session:
            t = time.perf_counter()
            view = await CustomerService(session, SystemClock()).reads.lookup(1, identifier=code.lower())
            elapsed = (time.perf_counter() - t) * 1000
        assert view.loyalty_card_code == code
        if n >= 200:  # the first lookups warm the pool and the caches
            samples.append(elapsed)
    await engine.dispose()
    return sql, plan, percentiles(samples), load_seconds


def run() -> str:
    sql, plan, (median, p99), load_seconds = asyncio.run(_measure())
    return "\n".join(
        [
            "# Customer lookup by loyalty card among 1,000,000 customers",
            "",
            f"{machine()}; PostgreSQL on 127.0.0.1, database `{DATABASE}`, schema from",
            "`loyalty_core.models.metadata.create_all`. Vendor 1 holds 1,000,000 customers and vendor 2",
            f"{OTHER_VENDOR:,}; each customer has a wallet, an email identifier and a loyalty card",
            f"({2 * (CUSTOMERS + OTHER_VENDOR):,} identifier rows). Loading and `VACUUM ANALYZE` took",
            f"{load_seconds:.0f} s.",
            "",
            "The statement `CustomerService.reads.lookup` runs for a card scanned in lower case (literal",
            "values inlined for EXPLAIN):",
            "",
            "```sql",
            sql,
            "```",
            "",
            "`EXPLAIN (ANALYZE, BUFFERS)`, second run:",
            "",
            "```",
            plan,
            "```",
            "",
            "The card is found through `uq_customer_identifiers_vendor_value` on",
            "`(vendor_id, lower(value))`, the customer through `uq_customers_vendor_id_id`, the wallet through",
            "`uq_wallets_vendor_customer` and the identifier list through",
            "`ix_customer_identifiers_vendor_customer`: no table is read sequentially.",
            "",
            f"Latency of `CustomerService.reads.lookup` (one session per lookup, {LOOKUPS} random cards after",
            f"200 warm-up): median {median:.3f} ms, p99 {p99:.3f} ms.",
            "",
        ]
    )
