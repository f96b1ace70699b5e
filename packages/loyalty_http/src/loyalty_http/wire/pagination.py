"""The paginated envelope and the page parameter (INPUT-11)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Annotated, Any, Generic, TypeVar
from urllib.parse import urlencode

import msgspec
from litestar import Request

T = TypeVar("T")

PerPage = Annotated[int, msgspec.Meta(ge=1, le=100)]
DEFAULT_PER_PAGE = 15

_WHOLE = re.compile(r"\s*\+?[0-9]+\s*")


class Links(msgspec.Struct):
    first: str
    last: str
    prev: str | None
    next: str | None


class Meta(msgspec.Struct):
    current_page: int
    last_page: int
    per_page: int
    total: int


class Page(msgspec.Struct, Generic[T]):
    data: Sequence[T]
    links: Links
    meta: Meta


def page_number(request: Request[Any, Any, Any]) -> int:
    """A ``page`` below 1, or one that is not a whole number, is page 1."""
    raw = request.query_params.get("page")
    if raw is None or not _WHOLE.fullmatch(raw):
        return 1
    digits = raw.strip().lstrip("+").lstrip("0")
    # past ten digits the page is beyond any list: no conversion (Python refuses 4,300+ digits)
    return max(1, min(int(digits or "0"), 2**31 - 1)) if len(digits) <= 10 else 2**31 - 1


def offset_of(page: int, per_page: int) -> int:
    return (page - 1) * per_page


def paginate(request: Request[Any, Any, Any], items: Sequence[T], *, total: int, page: int, per_page: int) -> Page[T]:
    last = max(1, math.ceil(total / per_page))
    params = [(k, v) for k, v in request.query_params.multi_items() if k != "page"]
    base = str(request.url.with_replacements(query=""))

    def url(number: int) -> str:
        return f"{base}?{urlencode([*params, ('page', str(number))])}"

    return Page(
        data=items,
        links=Links(
            first=url(1),
            last=url(last),
            prev=url(page - 1) if 1 < page <= last + 1 else None,
            next=url(page + 1) if page < last else None,
        ),
        meta=Meta(current_page=page, last_page=last, per_page=per_page, total=total),
    )
