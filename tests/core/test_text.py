"""How searches compare names: without case or accents, in Python and in SQL alike, and a search
term's LIKE wildcards taken literally."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from sqlalchemy import literal, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.text import fold, folded, like_part
from loyalty_core.usage import month_of


@pytest.mark.parametrize(
    ("given", "folded_to"),
    [("José Muñoz", "jose munoz"), ("ÇAFÉ ZOË", "cafe zoe"), ("Ångström", "angstrom"), ("plain", "plain")],
)
def test_fold_lowers_and_drops_accents(given: str, folded_to: str) -> None:
    assert fold(given) == folded_to


async def test_sql_folds_as_python_does(db: AsyncSession) -> None:
    """The database folds upper-case accented letters itself, whatever its lower() does with them."""
    for text in ("José Muñoz", "ÇAFÉ ZOË", "ØRJAN Šimon Žofie"):
        assert await db.scalar(select(folded(literal(text)))) == fold(text)


def test_like_part_takes_wildcards_literally() -> None:
    assert like_part("50%_off\\") == "%50\\%\\_off\\\\%"


async def test_like_part_matches_only_the_literal_text(db: AsyncSession) -> None:
    assert await db.scalar(select(literal("sale 50% off").like(like_part("50%")))) is True
    assert await db.scalar(select(literal("sale 500 off").like(like_part("50%")))) is False


@pytest.mark.parametrize(
    ("now", "period"),
    [
        (datetime(2027, 2, 14, 12, tzinfo=UTC), (date(2027, 2, 1), date(2027, 2, 28))),
        (datetime(2028, 2, 29, 23, 59, tzinfo=UTC), (date(2028, 2, 1), date(2028, 2, 29))),
        (datetime.fromisoformat("2027-01-01T00:30:00+01:00"), (date(2026, 12, 1), date(2026, 12, 31))),
    ],
)
def test_usage_period_is_the_utc_calendar_month(now: datetime, period: tuple[date, date]) -> None:
    assert month_of(now) == period
