"""Cards: generate a batch of free cards for printing, and download any batch as PDF labels or CSV
(BATCH-1, BATCH-2, BATCH-3). Owners only."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator
from typing import Any

from anyio import CapacityLimiter, to_thread
from litestar import Controller, Request, Response, get, post
from litestar.params import FromPath, FromQuery
from litestar.response import Stream

from loyalty_core.bounds import CARD_BATCH_COUNT, MAX_BATCH
from loyalty_core.customers.errors import CardBatchNotFound
from loyalty_core.customers.services.card_batches import CardBatches
from loyalty_core.error_status import status_of
from loyalty_core.errors import DomainError
from loyalty_core.staff.reads import user_emails
from loyalty_portal.access import OWNER_ONLY, Cfg, Db, Me
from loyalty_portal.card_sheets import PER_PAGE, SheetWriter
from loyalty_portal.config import PortalConfig
from loyalty_portal.exports import safe_cell
from loyalty_portal.forms import Form, field_problems, row_id
from loyalty_portal.paging import page_number, pager_of
from loyalty_portal.web import MOUNT_PATH, portal_path, render, see_other

CURRENT = "Cards"


def batch_id_of(raw: str) -> int:
    return row_id(raw, lambda: CardBatchNotFound("The shop has no card batch with this id.", batch_id=raw))


async def _codes(config: PortalConfig, vendor_id: int, batch_id: int) -> AsyncIterator[list[str]]:
    """The batch's codes a page of rows at a time, each page read in a short transaction of its own
    so a long download holds no connection."""
    after = 0
    while True:
        async with config.sessionmaker() as db:
            found = await CardBatches(db, config.clock).codes_after(vendor_id, batch_id, after)
        if not found:
            return
        after = found[-1][0]
        yield [code for _, code in found]


async def _csv(config: PortalConfig, vendor_id: int, batch_id: int) -> AsyncIterator[bytes]:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(["code"])
    async for codes in _codes(config, vendor_id, batch_id):
        writer.writerows([safe_cell(code)] for code in codes)
        yield buffer.getvalue().encode()
        buffer.seek(0)
        buffer.truncate()
    if buffer.tell():
        yield buffer.getvalue().encode()


_drawing: list[CapacityLimiter] = []
"""The process's one slot for drawing a sheet, made in the first download's event loop."""


async def draw_sheet(sheets: SheetWriter, codes: list[str]) -> None:
    """One sheet drawn off the event loop and one sheet at a time in this process, whatever the shop:
    a thread per concurrent download would take the interpreter from every other request (other
    shops' lookups slowed tenfold under four 10,000-card downloads); downloads at once take turns a
    sheet each instead (BATCH-2)."""
    await to_thread.run_sync(sheets.page, codes, limiter=_slot())


def _slot() -> CapacityLimiter:
    if not _drawing:
        _drawing.append(CapacityLimiter(1))
    return _drawing[0]


CHUNK = 64 * 1024
"""The bytes sent at a time of a finished document."""


async def _pdf(config: PortalConfig, vendor_id: int, batch_id: int, shop_name: str) -> AsyncIterator[bytes]:
    sheets = SheetWriter(shop_name)
    try:
        waiting: list[str] = []
        async for codes in _codes(config, vendor_id, batch_id):
            waiting.extend(codes)
            while len(waiting) >= PER_PAGE:
                await draw_sheet(sheets, waiting[:PER_PAGE])
                del waiting[:PER_PAGE]
        if waiting:
            await draw_sheet(sheets, waiting)
        # the document's assembly (compressing the sheets, subsetting the font) takes the same slot
        document = await to_thread.run_sync(sheets.finish, limiter=_slot())
    finally:
        sheets.close()
    for start in range(0, len(document), CHUNK):
        yield document[start : start + CHUNK]


def _download(body: AsyncIterator[bytes], media_type: str, filename: str) -> Stream:
    return Stream(body, media_type=media_type, headers={"Content-Disposition": f'attachment; filename="{filename}"'})


async def _batches_page(
    visitor: Me, db: Db, config: Cfg, *, status: int = 200, page: int = 1, **context: Any
) -> Response[Any]:
    """The generate form and a page of the shop's batches, newest first."""
    found = await CardBatches(db, config.clock).recent(visitor.vendor_id, page=page)
    batches = found.items
    makers = await user_emails(db, visitor.vendor_id, {b.created_by_user_id for b in batches if b.created_by_user_id})
    return render(
        "cards.html",
        status=status,
        visitor=visitor,
        current=CURRENT,
        batches=batches,
        pager=pager_of(found, portal_path("cards"), {}),
        makers=makers,
        most=MAX_BATCH,
        **context,
    )


class CardsController(Controller):
    path = "/cards"
    opt = OWNER_ONLY

    @get("/")
    async def batches(self, visitor: Me, db: Db, config: Cfg, page: FromQuery[str] = "") -> Response[Any]:
        return await _batches_page(visitor, db, config, page=page_number(page), values={})

    @post("/")
    async def generate(self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        form = await Form.of(request)
        count = form.whole("count", CARD_BATCH_COUNT, required=True)
        try:
            form.check()
            async with db.begin_nested():
                # a missing count was refused by check(); core checks the bounds again
                batch, _ = await CardBatches(db, config.clock).create(
                    visitor.vendor_id, count or 0, created_by=visitor.user_id
                )
        except DomainError as refused:
            problems = field_problems(refused)
            return await _batches_page(
                visitor,
                db,
                config,
                status=status_of(refused),
                values=form.raw,
                problems=problems,
                error=refused.message,
            )
        return see_other(f"{MOUNT_PATH}/cards/{batch.id}")

    @get("/{batch_id:str}")
    async def batch(self, batch_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        found = await CardBatches(db, config.clock).get(visitor.vendor_id, batch_id_of(batch_id))
        makers = await user_emails(
            db, visitor.vendor_id, [found.created_by_user_id] if found.created_by_user_id else []
        )
        return render("card_batch.html", visitor=visitor, current=CURRENT, batch=found, makers=makers)

    @get("/{batch_id:str}/pdf")
    async def download_pdf(self, batch_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Stream:
        found = await CardBatches(db, config.clock).get(visitor.vendor_id, batch_id_of(batch_id))
        return _download(
            _pdf(config, visitor.vendor_id, found.id, visitor.vendor_name), "application/pdf", f"cards-{found.id}.pdf"
        )

    @get("/{batch_id:str}/csv")
    async def download_csv(self, batch_id: FromPath[str], visitor: Me, db: Db, config: Cfg) -> Stream:
        found = await CardBatches(db, config.clock).get(visitor.vendor_id, batch_id_of(batch_id))
        return _download(_csv(config, visitor.vendor_id, found.id), "text/csv", f"cards-{found.id}.csv")
