"""The open-lot condition is written with a literal ``0`` (LEDGER-9's due points and every read of a
wallet's open lots): a prepared statement's generic plan uses the partial index
``ix_point_lots_wallet_open`` only when the statement repeats its predicate, so a bound ``0`` read
every lot of the vendor per wallet at a million customers."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import cast

from sqlalchemy import Table, bindparam
from sqlalchemy.dialects.postgresql import psycopg

from loyalty_core.wallet.models import OPEN_LOT, PointLot, due_points

DIALECT = psycopg.dialect()  # type: ignore[no-untyped-call]  # SQLAlchemy leaves the dialects untyped


def test_due_points_repeat_the_partial_indexs_predicate() -> None:
    sql = str(
        due_points(bindparam("vendor_id"), bindparam("wallet_id"), datetime(2026, 1, 1, tzinfo=UTC)).compile(
            dialect=DIALECT
        )
    )
    assert "point_lots.remaining > 0" in sql
    [index] = [i for i in cast("Table", PointLot.__table__).indexes if i.name == "ix_point_lots_wallet_open"]
    assert str(index.dialect_options["postgresql"]["where"]) == "remaining > 0"


def test_the_open_lot_condition_binds_nothing() -> None:
    compiled = OPEN_LOT.compile(dialect=DIALECT)
    assert (str(compiled), compiled.params) == ("point_lots.remaining > 0", {})
