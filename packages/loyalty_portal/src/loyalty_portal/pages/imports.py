"""Import (owners only): a CSV of customers with their cards and opening balances, uploaded as a
stream to disk, checked in a dry run, then run on the worker as a job whose progress the page shows
(CUSTOMER-15)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.params import FromPath

from loyalty_core.accounts.jobs.import_file import COLUMNS, ImportFileRefused
from loyalty_core.accounts.jobs.imports import ImportJobs, progress
from loyalty_core.accounts.models import CustomerImport, ImportState
from loyalty_core.errors import NotFound
from loyalty_portal.access import CSRF_IN_STREAM, OWNER_ONLY, Cfg, Db, Me
from loyalty_portal.forms import row_id
from loyalty_portal.once import claim
from loyalty_portal.uploads import receive_file
from loyalty_portal.web import MOUNT_PATH, Refused, log, render, see_other

CURRENT = "Import"
MAX_FILE_BYTES = 32 * 1_048_576
"""About 300,000 rows of a typical file; the API's 1 MiB body limit is for its JSON calls."""


class ImportNotFound(NotFound):
    code = "NOT_FOUND"


def job_id_of(raw: str) -> int:
    return row_id(raw, lambda: ImportNotFound("The shop has no import with this number."))


async def job_of(db: Db, config: Cfg, vendor_id: int, raw: str) -> CustomerImport:
    job = await ImportJobs(db, config.clock).get(vendor_id, job_id_of(raw))
    if job is None:
        raise ImportNotFound("The shop has no import with this number.")
    return job


async def page(db: Db, config: Cfg, visitor: Me, *, status: int = 200, **context: Any) -> Response[str]:
    jobs = await ImportJobs(db, config.clock).recent(visitor.vendor_id)
    return render("import.html", status=status, visitor=visitor, current=CURRENT, jobs=jobs, columns=COLUMNS, **context)


class ImportController(Controller):
    path = "/import"
    opt = OWNER_ONLY

    @get("/")
    async def choose(self, visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        return await page(db, config, visitor)

    @post("/", opt=CSRF_IN_STREAM, request_max_body_size=MAX_FILE_BYTES + 65_536)
    async def upload(self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        if config.import_dir is None:
            raise Refused(404, "Imports are not set up on this service.")
        received = await receive_file(request, visitor, Path(config.import_dir), field="file", max_bytes=MAX_FILE_BYTES)
        # the router cannot read a streamed form's key: it is claimed here, before the job is made
        first = await claim(request, db, config, received.form_key)
        if first is not None:
            await received.discard()
            return first
        uploaded = received.file
        if uploaded is None:
            return await page(db, config, visitor, status=422, error="Choose a CSV file to check.")
        jobs = ImportJobs(db, config.clock)
        try:
            job = await jobs.checked(visitor.vendor_id, visitor.user_id, uploaded.file_name, uploaded.path)
            # the shop's oldest checks beyond its allowance, and any past their age, go (PORTAL-9)
            for discarded in await jobs.discard_unimported(visitor.vendor_id):
                await asyncio.to_thread(discarded.unlink, missing_ok=True)
        except ImportFileRefused as refused:
            await asyncio.to_thread(uploaded.path.unlink, missing_ok=True)
            return await page(db, config, visitor, status=422, error=str(refused))
        except BaseException:
            # no job names the file: left on disk, nothing would ever remove it (PORTAL-6)
            await asyncio.to_thread(uploaded.path.unlink, missing_ok=True)
            raise
        return see_other(f"{MOUNT_PATH}/import/{job.id}")

    @get("/{job_id:str}")
    async def show(self, job_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        job = await job_of(db, config, visitor.vendor_id, job_id)
        return render(
            "import_job.html",
            visitor=visitor,
            current=CURRENT,
            job=job,
            percent=progress(job),
            waiting=job.state in (ImportState.QUEUED, ImportState.RUNNING),
        )

    @post("/{job_id:str}/run")
    async def run(self, job_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        job = await job_of(db, config, visitor.vendor_id, job_id)
        queued = await ImportJobs(db, config.clock).queue(job)
        await db.commit()  # the worker must find the job queued when it is handed the job
        if queued and config.enqueue_import is not None:
            # the minute's sweep of queued imports runs a job whose hand-over is lost
            with contextlib.suppress(Exception):
                await config.enqueue_import(job.id)
            log.info("customer import queued", job_id=job.id)
        return see_other(f"{MOUNT_PATH}/import/{job.id}")
