"""Card sheets are drawn off the event loop, one sheet at a time per process whatever the shop, so
concurrent downloads take turns instead of taking the interpreter from other requests (BATCH-2)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence

from loyalty_portal.card_sheets import SheetWriter
from loyalty_portal.pages.cards import draw_sheet
from tests.support.pdf_labels import labels


class Counting(SheetWriter):
    """A writer whose sheets take a while, counting how many are drawn at once and where."""

    def __init__(self, gauge: list[int], threads: set[int]) -> None:
        super().__init__("Bakery")
        self.gauge, self.threads = gauge, threads

    def page(self, codes: Sequence[str]) -> None:
        self.gauge[0] += 1
        self.gauge[1] = max(self.gauge[1], self.gauge[0])
        self.threads.add(threading.get_ident())
        time.sleep(0.05)
        self.gauge[0] -= 1
        super().page(codes)


async def test_downloads_at_once_draw_one_sheet_at_a_time_off_the_loop() -> None:
    """BATCH-2: four downloads of three sheets each, gathered: never two sheets drawn at once, none
    on the event loop's thread, and every sheet drawn."""
    gauge, threads = [0, 0], set[int]()
    writers = [Counting(gauge, threads) for _ in range(4)]

    async def download(writer: Counting) -> None:
        for n in range(3):
            await draw_sheet(writer, [f"CARD{n:04d}"])

    await asyncio.gather(*(download(w) for w in writers))
    assert gauge[1] == 1
    assert threading.get_ident() not in threads
    drawn = [labels(writer.finish()) for writer in writers]
    assert all(
        [[label.code for label in sheet] for sheet in sheets] == [["CARD0000"], ["CARD0001"], ["CARD0002"]]
        for sheets in drawn
    )
