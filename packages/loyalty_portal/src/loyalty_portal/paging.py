"""What every list page shows around its rows (PORTAL-18): which rows these are of how many ("51–53 of
53", "10,001–10,050 of 10,000+"), and links to the previous and next page that keep the list's
filters and sort, since they live in the query string. ``_pager.html`` renders it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from loyalty_core.listing import Paged
from loyalty_core.numbers import whole_of


def page_number(raw: str | None) -> int:
    """The page a query asks for: anything but a positive whole number is the first page."""
    number = whole_of(raw.strip()) if raw else None
    return number if number is not None and number >= 1 else 1


@dataclass(frozen=True, slots=True)
class Pager:
    shown: str
    previous: str | None
    next: str | None
    too_deep: bool
    name: str
    cap: str


def pager_of(found: Paged[Any], path: str, query: Mapping[str, str], *, name: str = "page") -> Pager:
    """The pager of ``found``, its links to ``path`` with ``query`` (the list's filters) and the page
    in ``name`` (a page holding two lists pages each under its own name)."""
    kept = {key: value for key, value in query.items() if value and key != name}

    def link(page: int) -> str:
        params: dict[str, Any] = {**kept, name: page} if page > 1 else kept
        return f"{path}?{urlencode(params)}" if params else path

    total = f"{found.total:,}+" if found.more else f"{found.total:,}"
    shown = f"{found.first:,}–{found.last:,} of {total}" if found.items else f"0 of {total}"
    return Pager(
        shown=shown,
        previous=link(found.page - 1) if found.page > 1 else None,
        next=link(found.page + 1) if found.has_next else None,
        too_deep=found.too_deep,
        name=name,
        cap=f"{found.total:,}",
    )
