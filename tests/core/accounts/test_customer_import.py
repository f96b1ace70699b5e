"""The portal's customer import as a job (CUSTOMER-15): a file checked in a dry run, then run a chunk
per transaction with its progress in PostgreSQL, re-runnable without bringing anything twice, in
bounded memory whatever the file's length."""

from __future__ import annotations

import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from loyalty_core.accounts.jobs.import_file import COLUMNS, ImportFileRefused
from loyalty_core.accounts.jobs.imports import STALLED, ImportJobs, dry_run, run_import
from loyalty_core.accounts.models import CustomerImport
from loyalty_core.clock import FixedClock
from loyalty_core.db import make_sessionmaker
from tests.support.vendors import make_vendor

HEADER = "external_id,card,email,first_name,last_name,phone,date_of_birth,opening_points\n"


@pytest.fixture
def sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return make_sessionmaker(engine)


@pytest.fixture
async def vendor_id(sessionmaker: async_sessionmaker[AsyncSession]) -> AsyncIterator[int]:
    async with sessionmaker() as session:
        vendor = await make_vendor(session, expire_after_days=365)
        await session.commit()
        yield vendor.id


def write(path: Path, rows: list[str]) -> Path:
    path.write_text(HEADER + "".join(rows), encoding="utf-8")
    return path


async def queued_job(
    sessionmaker: async_sessionmaker[AsyncSession], clock: FixedClock, vendor_id: int, path: Path
) -> int:
    async with sessionmaker() as session:
        jobs = ImportJobs(session, clock)
        job = await jobs.checked(vendor_id, 7, path.name, path)
        assert await jobs.queue(job)
        await session.commit()
        return job.id


async def job_row(sessionmaker: async_sessionmaker[AsyncSession], job_id: int) -> CustomerImport:
    async with sessionmaker() as session:
        return await session.get_one(CustomerImport, job_id)


async def test_the_dry_run_counts_rows_and_gives_each_refusal_its_reason(tmp_path: Path) -> None:
    """CUSTOMER-15: rows stand alone; the first 100 refusals are kept with their row numbers."""
    path = write(
        tmp_path / "a.csv",
        [
            "e1,,a@x.example,Ann,,,1990-01-31,10\n",
            ",,,Nameless,,,,\n",
            "e3,SHORT,,,,,,\n",
            "e4,,not-an-email,,,,,\n",
            "e5,,,,,,31-01-1990,\n",
            "e6,,,,,,,-5\n",
            "e7,,,,,,,2147483648\n",
            "e8,,,\n",
            "\n",
            ",ABCD1234,,,,,,\n",
        ],
    )
    assert dry_run(path) == (
        9,
        2,
        [
            {"row": 2, "reason": "The row needs an external_id or a card."},
            {"row": 3, "reason": "card is not a card code (8 letters and digits)."},
            {"row": 4, "reason": "email is not an email address."},
            {"row": 5, "reason": "date_of_birth is not a date such as 1990-12-31."},
            {"row": 6, "reason": "opening_points is not a whole number from 0 to 2147483647."},
            {"row": 7, "reason": "opening_points is not a whole number from 0 to 2147483647."},
            {"row": 8, "reason": "The row has 4 fields; the header names 8."},
        ],
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "The file is empty; the first row names the columns."),
        (b"external_id,shoe_size\n", "Unknown column 'shoe_size'; the columns are " + ", ".join(COLUMNS) + "."),
        (b"first_name,email\nAnn,a@x.example\n", "The file needs an external_id or a card column."),
        (b"card,card\n", "A column is named twice."),
        (b"external_id\n\xff\xfe\n", "The file is not UTF-8 text."),
    ],
)
def test_a_file_without_a_readable_header_is_refused_whole(tmp_path: Path, content: bytes, message: str) -> None:
    """CUSTOMER-15."""
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    with pytest.raises(ImportFileRefused) as refused:
        dry_run(path)
    assert str(refused.value) == message


async def test_an_excel_csv_utf8_file_with_its_byte_order_mark_is_checked_and_imported(
    sessionmaker: async_sessionmaker[AsyncSession], clock: FixedClock, vendor_id: int, tmp_path: Path
) -> None:
    """CUSTOMER-16: Excel's "CSV UTF-8" starts with the byte order mark EF BB BF and ends its lines
    with CRLF; the mark is no part of the first column's name, so the file reads as without it."""
    path = tmp_path / "excel.csv"
    path.write_bytes(b"\xef\xbb\xbfexternal_id,first_name,opening_points\r\nx-1,Jos\xc3\xa9,12\r\nx-2,Zo\xc3\xab,\r\n")
    assert dry_run(path) == (2, 2, [])
    job_id = await queued_job(sessionmaker, clock, vendor_id, path)
    assert await run_import(sessionmaker, clock, job_id) == "done"
    job = await job_row(sessionmaker, job_id)
    assert (job.rows_total, job.rows_done, job.rows_created, job.rows_refused) == (2, 2, 2, 0)
    async with sessionmaker() as session:
        imported = await session.execute(
            text(
                "SELECT c.external_id, c.first_name, w.balance FROM customers c "
                "JOIN wallets w ON w.vendor_id = c.vendor_id AND w.customer_id = c.id "
                "WHERE c.vendor_id = :v ORDER BY c.external_id"
            ),
            {"v": vendor_id},
        )
        assert [tuple(row) for row in imported] == [("x-1", "José", 12), ("x-2", "Zoë", 0)]


async def test_a_run_imports_with_opening_balances_and_a_second_run_brings_nothing_twice(
    sessionmaker: async_sessionmaker[AsyncSession], clock: FixedClock, vendor_id: int, tmp_path: Path
) -> None:
    """CUSTOMER-14, CUSTOMER-15: a chunk per transaction; the same file again holds every customer already."""
    rows = [f"ext-{n},,,Name{n},,,,{n}\n" for n in range(1, 251)] + [",ABCD0001,,Card,,,,5\n", "bad,,,,,,x,\n"]
    first = await queued_job(sessionmaker, clock, vendor_id, write(tmp_path / "one.csv", rows))

    assert await run_import(sessionmaker, clock, first) == "done"

    job = await job_row(sessionmaker, first)
    assert (job.state, job.rows_total, job.rows_done, job.rows_created, job.rows_held, job.rows_refused) == (
        "done",
        252,
        252,
        251,
        0,
        1,
    )
    assert job.errors == [{"row": 252, "reason": "date_of_birth is not a date such as 1990-12-31."}]
    assert not (tmp_path / "one.csv").exists()
    second = await queued_job(sessionmaker, clock, vendor_id, write(tmp_path / "two.csv", rows))
    assert await run_import(sessionmaker, clock, second) == "done"
    again = await job_row(sessionmaker, second)
    assert (again.rows_created, again.rows_held, again.rows_refused) == (0, 251, 1)
    async with sessionmaker() as session:
        balances = (
            await session.execute(
                text(
                    "SELECT count(*), sum(w.balance), count(*) FILTER (WHERE w.balance > 0) FROM wallets w "
                    "WHERE w.vendor_id = :v"
                ),
                {"v": vendor_id},
            )
        ).one()
        entries = (
            await session.execute(
                text(
                    "SELECT count(*), count(DISTINCT wallet_id), min(reason), max(reason), min(causer_type), "
                    "max(causer_id) FROM ledger_entries WHERE vendor_id = :v"
                ),
                {"v": vendor_id},
            )
        ).one()
    assert tuple(balances) == (251, sum(range(1, 251)) + 5, 251)
    assert tuple(entries) == (251, 251, "opening_balance", "opening_balance", "import", "7")


async def test_a_stopped_run_is_taken_up_at_the_first_row_not_done(
    sessionmaker: async_sessionmaker[AsyncSession], clock: FixedClock, vendor_id: int, tmp_path: Path
) -> None:
    """CUSTOMER-15: progress is committed with each chunk, so a new worker goes on from there."""
    rows = [f"resume-{n},,,,,,,1\n" for n in range(10)]
    job_id = await queued_job(sessionmaker, clock, vendor_id, write(tmp_path / "r.csv", rows))
    async with sessionmaker() as session:
        # a worker that died after its first chunk of 4 rows: running, last moved long ago
        await session.execute(
            text(
                "UPDATE customer_imports SET state = 'running', rows_done = 4, rows_created = 4, "
                "updated_at = :long_ago WHERE id = :j"
            ),
            {"j": job_id, "long_ago": clock.now() - STALLED * 2},
        )
        await session.commit()
        assert await ImportJobs(session, clock).due() == [job_id]
    assert await run_import(sessionmaker, clock, job_id) == "done"
    job = await job_row(sessionmaker, job_id)
    assert (job.rows_done, job.rows_created) == (10, 10)
    async with sessionmaker() as session:
        imported = await session.scalars(
            text("SELECT external_id FROM customers WHERE vendor_id = :v ORDER BY id"), {"v": vendor_id}
        )
        assert list(imported) == [f"resume-{n}" for n in range(4, 10)]
    assert await run_import(sessionmaker, clock, job_id) == "not due"


def test_a_dry_run_of_100000_rows_holds_bounded_memory(tmp_path: Path) -> None:
    """CUSTOMER-15: the file is read a row at a time; memory does not grow with its length."""
    path = tmp_path / "big.csv"
    with path.open("w", encoding="utf-8") as out:
        out.write(HEADER)
        for n in range(100_000):
            out.write(f"big-{n},,customer{n}@big.example,First{n},Last{n},+3161234{n:04d},1990-01-01,{n}\n")
    assert path.stat().st_size > 8_000_000
    tracemalloc.start()
    try:
        assert dry_run(path) == (100_000, 100_000, [])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, peak


async def test_a_run_of_100000_rows_goes_a_chunk_at_a_time_in_bounded_memory(
    sessionmaker: async_sessionmaker[AsyncSession], clock: FixedClock, vendor_id: int, tmp_path: Path
) -> None:
    """CUSTOMER-15: 100,000 rows through the run, one transaction per chunk. Most rows are refused by
    the file check so the test stays quick; every 1,000th brings a customer."""
    path = tmp_path / "long.csv"
    with path.open("w", encoding="utf-8") as out:
        out.write(HEADER)
        for n in range(100_000):
            key = f"long-{n}" if n % 1_000 == 0 else ""
            out.write(f"{key},,,First{n},Last{n},,,{n}\n")
    job_id = await queued_job(sessionmaker, clock, vendor_id, path)
    tracemalloc.start()
    try:
        assert await run_import(sessionmaker, clock, job_id, chunk_rows=2_000) == "done"
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    job = await job_row(sessionmaker, job_id)
    assert (job.rows_done, job.rows_created, job.rows_refused, len(job.errors)) == (100_000, 100, 99_900, 100)
    assert peak < 8_000_000, peak
    async with sessionmaker() as session:
        brought = await session.scalar(text("SELECT sum(balance) FROM wallets WHERE vendor_id = :v"), {"v": vendor_id})
    assert brought == sum(range(0, 100_000, 1_000))
