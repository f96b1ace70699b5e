"""The batch rules that need no database (CATALOGUE-8)."""

from __future__ import annotations

from collections.abc import Sequence

from loyalty_core.catalogue.errors import BatchTooLarge

MAX_BATCH_ITEMS = 100


def check_size(count: int) -> None:
    """CATALOGUE-8: 1 to 100 products; more is 422 BATCH_TOO_LARGE, before any item is read."""
    if count > MAX_BATCH_ITEMS:
        raise BatchTooLarge(
            f"A batch holds at most {MAX_BATCH_ITEMS} products; split it and push in chunks.", count=count
        )


def duplicate_message(first: int) -> str:
    return f"The external_id already occurs at index {first} of this batch; only the first is processed."


def later_duplicates(external_ids: Sequence[str | None]) -> dict[int, int]:
    """CATALOGUE-8: for every item whose ``external_id`` occurred earlier in the batch, the index of the
    first occurrence. Items without a usable ``external_id`` (None) are never duplicates."""
    first: dict[str, int] = {}
    later: dict[int, int] = {}
    for index, external_id in enumerate(external_ids):
        if external_id is None:
            continue
        seen = first.setdefault(external_id, index)
        if seen != index:
            later[index] = seen
    return later
