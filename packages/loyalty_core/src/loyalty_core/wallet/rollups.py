"""The ledger's totals per vendor, UTC day and entry type, kept by the ``ledger-totals`` job
(TOTALS-1), so the operator's metrics and the portal's dashboard read a few rows and the entries
not folded yet instead of the whole ledger.

No till write touches these tables: every entry is written once, by the ledger's one writer, and
the job folds it later (``wallet/folding.py``). A total holds what came in and what went out apart
(``points_in``, ``points_out``; ``points`` is their difference), so both directions of an
adjustment stay readable.
"""

from __future__ import annotations

from sqlalchemy import (
    ARRAY,
    BigInteger,
    CheckConstraint,
    Column,
    Date,
    ForeignKey,
    PrimaryKeyConstraint,
    SmallInteger,
    String,
    Table,
    Text,
)

from loyalty_core.db import Base

_BALANCED = "points = points_in - points_out AND points_in >= 0 AND points_out >= 0 AND entries >= 1"

ledger_totals = Table(
    "ledger_totals",
    Base.metadata,
    Column("vendor_id", BigInteger, ForeignKey("vendors.id"), nullable=False),
    Column("day", Date, nullable=False),
    Column("type", String(8), nullable=False),
    Column("points", BigInteger, nullable=False),
    Column("points_in", BigInteger, nullable=False),
    Column("points_out", BigInteger, nullable=False),
    Column("entries", BigInteger, nullable=False),
    PrimaryKeyConstraint("vendor_id", "day", "type", name="pk_ledger_totals"),
    CheckConstraint(_BALANCED, name="balanced"),
)
"""One vendor's entries of one type on one UTC day (of their ``created_at``), folded."""

ledger_totals_overall = Table(
    "ledger_totals_overall",
    Base.metadata,
    Column("type", String(8), nullable=False),
    Column("points", BigInteger, nullable=False),
    Column("points_in", BigInteger, nullable=False),
    Column("points_out", BigInteger, nullable=False),
    Column("entries", BigInteger, nullable=False),
    PrimaryKeyConstraint("type", name="pk_ledger_totals_overall"),
    CheckConstraint(_BALANCED, name="balanced"),
)
"""Every vendor's entries of one type, folded: what ``GET /metrics`` reads, a handful of rows
whatever the number of vendors and days."""

ledger_totals_watermark = Table(
    "ledger_totals_watermark",
    Base.metadata,
    Column("id", SmallInteger, nullable=False),
    Column("folded_through", BigInteger, nullable=False, server_default="0"),
    Column("pending_through", BigInteger, nullable=True),
    Column("purchases_folded_through", BigInteger, nullable=False, server_default="0"),
    Column("purchases_pending_through", BigInteger, nullable=True),
    Column("pending_transactions", ARRAY(Text), nullable=False, server_default="{}"),
    PrimaryKeyConstraint("id", name="pk_ledger_totals_watermark"),
    CheckConstraint("id = 1", name="one_row"),
)
"""The fold's one row: every entry with an id up to ``folded_through`` is in the totals and none
above it (and every purchase up to ``purchases_folded_through`` in ``customer_activity``).
``pending_through`` (``purchases_pending_through``) is the next bound, safe to fold once none of
the ``pending_transactions`` (virtual transaction ids) still runs."""

WATERMARK_ID = 1
