"""The portal's customer imports as jobs whose progress lives in PostgreSQL (CUSTOMER-15).

An upload is checked first (a dry run: rows accepted, rows refused with their reasons) and stored as
a job in state ``checked``; the owner's ``Import`` queues it; the worker runs it in chunks of
:data:`CHUNK` rows, one transaction each, which writes the chunk's customers and the job's progress
together. A run that stops (a crash, a deploy) is taken up again at the first row not done, and
the same file imported twice brings nothing twice: a customer whose external id or card the shop
holds already is counted as ``already in the shop`` and gets no second opening balance
(CUSTOMER-14). The file is read a row at a time, so memory stays bounded whatever its length.
"""

from __future__ import annotations

import asyncio
import itertools
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_core.accounts.jobs.import_file import ImportRow, open_file, rows_of
from loyalty_core.accounts.models import CustomerImport, ImportState
from loyalty_core.accounts.services import CustomerService
from loyalty_core.clock import Clock
from loyalty_core.customers.errors import ExternalIdDuplicate, IdentifierDuplicate
from loyalty_core.wallet.models import Causer, CauserType

CHUNK = 100
"""Rows a transaction. Each row's savepoint costs in proportion to what the session holds, so a
chunk's cost grows with its square: small chunks import fastest."""
MAX_ERRORS = 100
"""Refusals kept on a job to show; the counts hold them all."""
STALLED = timedelta(minutes=5)
"""A running job whose progress has not moved this long lost its worker; another takes it up."""
UNIMPORTED_FOR = timedelta(hours=24)
"""A checked upload never imported is removed this long after its check (PORTAL-9)."""
MAX_WAITING = 5
"""Checked uploads a shop may keep waiting; a newer check removes the oldest beyond them. With the
page's limit per file, this bounds what one shop keeps on disk (PORTAL-9)."""


def dry_run(path: Path) -> tuple[int, int, list[dict[str, Any]]]:
    """Rows in the file, rows accepted, and the first refusals; ``ImportFileRefused`` for a file
    that cannot be read at all."""
    total = accepted = 0
    errors: list[dict[str, Any]] = []
    with open_file(path) as text:
        for row in rows_of(text):
            total += 1
            if row.profile is not None:
                accepted += 1
            elif len(errors) < MAX_ERRORS:
                errors.append({"row": row.line, "reason": row.reason})
    return total, accepted, errors


class ImportJobs:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock

    async def checked(self, vendor_id: int, user_id: int | None, file_name: str, path: Path) -> CustomerImport:
        total, accepted, errors = await asyncio.to_thread(dry_run, path)
        now = self._clock.now()  # the service clock's: a check's age is counted on it (PORTAL-9)
        job = CustomerImport(
            created_at=now,
            updated_at=now,
            vendor_id=vendor_id,
            user_id=user_id,
            file_name=file_name[:255],
            path=str(path),
            state=ImportState.CHECKED,
            rows_total=total,
            rows_accepted=accepted,
            errors=errors,
        )
        self._session.add(job)
        await self._session.flush()
        return job

    async def get(self, vendor_id: int, job_id: int) -> CustomerImport | None:
        found: CustomerImport | None = await self._session.scalar(
            select(CustomerImport).where(CustomerImport.vendor_id == vendor_id, CustomerImport.id == job_id)
        )
        return found

    async def recent(self, vendor_id: int, limit: int = 20) -> list[CustomerImport]:
        found = await self._session.scalars(
            select(CustomerImport)
            .where(CustomerImport.vendor_id == vendor_id)
            .order_by(CustomerImport.id.desc())
            .limit(limit)
        )
        return list(found.all())

    async def queue(self, job: CustomerImport) -> bool:
        """A checked job is queued, its dry run's refusals left for the run to find again; any other
        state stays as it is (a second click runs nothing twice)."""
        queued = await self._session.execute(
            update(CustomerImport)
            .where(
                CustomerImport.vendor_id == job.vendor_id,
                CustomerImport.id == job.id,
                CustomerImport.state == ImportState.CHECKED,
            )
            .values(state=ImportState.QUEUED, errors=[], updated_at=self._clock.now())
        )
        return bool(queued.rowcount)  # type: ignore[attr-defined]

    async def discard_unimported(self, vendor_id: int | None = None) -> list[Path]:
        """Remove the jobs of uploads checked but never imported: those checked more than
        ``UNIMPORTED_FOR`` ago, and (for ``vendor_id``) a shop's beyond its ``MAX_WAITING`` newest.
        Answers their files, which the caller deletes: they hold customers' personal data."""
        stale = CustomerImport.updated_at < self._clock.now() - UNIMPORTED_FOR
        if vendor_id is not None:
            kept = (
                select(CustomerImport.id)
                .where(CustomerImport.vendor_id == vendor_id, CustomerImport.state == ImportState.CHECKED)
                .order_by(CustomerImport.id.desc())
                .limit(MAX_WAITING)
                .correlate(None)
            )
            stale = (CustomerImport.vendor_id == vendor_id) & (stale | CustomerImport.id.not_in(kept.scalar_subquery()))
        removed = await self._session.execute(
            delete(CustomerImport)
            .where(CustomerImport.state == ImportState.CHECKED, stale)
            .returning(CustomerImport.path)
        )
        return [Path(path) for path in removed.scalars()]

    async def due(self) -> list[int]:
        """Queued jobs, and running ones whose worker went away."""
        stalled = self._clock.now() - STALLED
        found = await self._session.scalars(
            select(CustomerImport.id)
            .where(
                or_(
                    CustomerImport.state == ImportState.QUEUED,
                    (CustomerImport.state == ImportState.RUNNING) & (CustomerImport.updated_at < stalled),
                )
            )
            .order_by(CustomerImport.id)
        )
        return list(found.all())


async def _claim(session: AsyncSession, clock: Clock, job_id: int) -> CustomerImport | None:
    """The job, marked running, when it is due and no other worker holds it."""
    now = clock.now()
    job: CustomerImport | None = await session.scalar(
        select(CustomerImport).where(CustomerImport.id == job_id).with_for_update(skip_locked=True)
    )
    if job is None or not (
        job.state == ImportState.QUEUED or (job.state == ImportState.RUNNING and job.updated_at < now - STALLED)
    ):
        return None
    job.state, job.updated_at = ImportState.RUNNING, now
    await session.commit()
    return job


async def run_import(
    sessionmaker: async_sessionmaker[AsyncSession], clock: Clock, job_id: int, *, chunk_rows: int = CHUNK
) -> str:
    """Run (or take up again) one job to its end, ``chunk_rows`` rows a transaction; answers the
    job's state afterwards."""
    async with sessionmaker() as session:
        job = await _claim(session, clock, job_id)
        if job is None:
            return "not due"
        vendor_id, done, path = job.vendor_id, job.rows_done, Path(job.path)
        causer = Causer(CauserType.IMPORT, str(job.user_id) if job.user_id is not None else None)
    # the file is read in a thread a chunk at a time: the event loop never waits on the disk
    text = await asyncio.to_thread(open_file, path)
    try:
        rows = itertools.islice(rows_of(text), done, None)
        while chunk := await asyncio.to_thread(lambda: list(itertools.islice(rows, chunk_rows))):
            async with sessionmaker() as session:
                await _run_chunk(session, clock, vendor_id, job_id, chunk, causer)
                await session.commit()
    finally:
        await asyncio.to_thread(text.close)
    async with sessionmaker() as session:
        await session.execute(
            update(CustomerImport)
            .where(CustomerImport.vendor_id == vendor_id, CustomerImport.id == job_id)
            .values(state=ImportState.DONE, updated_at=clock.now())
        )
        await session.commit()
    # the customers are in the database now, and the file holds their personal data
    await asyncio.to_thread(path.unlink, missing_ok=True)
    return ImportState.DONE


async def _run_chunk(
    session: AsyncSession, clock: Clock, vendor_id: int, job_id: int, chunk: list[ImportRow], causer: Causer
) -> None:
    """One chunk's customers and the job's progress, in the caller's one transaction."""
    job = await session.get_one(CustomerImport, job_id, with_for_update=True)
    accepted = [row for row in chunk if row.profile is not None]
    outcomes = await CustomerService(session, clock).enrolment.import_customers(
        vendor_id,
        importer=None,
        attested_on=None,
        items=[row.profile for row in accepted if row.profile is not None],
        opening_points=[row.opening_points for row in accepted],
        causer=causer,
    )
    errors = list(job.errors)
    created = held = 0
    refusals: list[tuple[int, str]] = [(row.line, row.reason or "") for row in chunk if row.profile is None]
    for row, outcome in zip(accepted, outcomes, strict=True):
        if outcome.customer is not None:
            created += 1
        elif isinstance(outcome.error, ExternalIdDuplicate | IdentifierDuplicate):
            held += 1
        elif outcome.error is not None:
            refusals.append((row.line, outcome.error.message))
    for line, reason in sorted(refusals):
        if len(errors) < MAX_ERRORS:
            errors.append({"row": line, "reason": reason})
    job.rows_done += len(chunk)
    job.rows_created += created
    job.rows_held += held
    job.rows_refused += len(refusals)
    job.errors = errors
    job.updated_at = clock.now()
    await session.flush()


def progress(job: CustomerImport) -> int:
    """Percent of the rows done."""
    return 100 if not job.rows_total else min(100, job.rows_done * 100 // job.rows_total)
