"""CLIENT-5: the ``iter_`` methods of the list operations yield every item of every page, asking
for the pages in order until ``links.next`` is null."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support.scripted_service import Scripted, data

ENTRY = {
    "id": 0,
    "wallet_id": 1,
    "type": "earn",
    "amount": 10,
    "running_balance": 10,
    "reason": None,
    "causer_type": "transaction",
    "causer_id": "7",
    "created_at": "2026-11-26T10:00:00Z",
}


def page(number: int, last: int, ids: list[int]) -> httpx.Response:
    def link(n: int | None) -> str | None:
        return None if n is None else f"/api/v1/customers/3/ledger?page={n}"

    body: dict[str, Any] = {
        "data": [{**ENTRY, "id": i} for i in ids],
        "links": {
            "first": link(1),
            "last": link(last),
            "prev": link(number - 1 if number > 1 else None),
            "next": link(number + 1 if number < last else None),
        },
        "meta": {"current_page": number, "last_page": last, "per_page": 2, "total": 5},
    }
    return data(body)


def test_every_page_is_read_in_order(service: Scripted) -> None:
    """CLIENT-5"""
    service.queue(page(1, 3, [1, 2]), page(2, 3, [3, 4]), page(3, 3, [5]))
    with service.client() as loyalty:
        ids = [entry.id for entry in loyalty.iter_ledger_entries(3, per_page=2, type="earn")]
    assert ids == [1, 2, 3, 4, 5]
    pages = [(r.url.params["page"], r.url.params["per_page"], r.url.params["type"]) for r in service.requests[1:]]
    assert pages == [("1", "2", "earn"), ("2", "2", "earn"), ("3", "2", "earn")]


def test_one_page_is_one_request(service: Scripted) -> None:
    """CLIENT-5: an empty list is one request and no items."""
    service.queue(page(1, 1, []))
    with service.client() as loyalty:
        assert list(loyalty.iter_ledger_entries(3)) == []
    assert len(service.calls()) == 1


def test_the_list_method_reads_one_page(service: Scripted) -> None:
    """CLIENT-5"""
    service.queue(page(2, 3, [3, 4]))
    with service.client() as loyalty:
        answer = loyalty.list_ledger_entries(3, page=2, per_page=2)
    assert [e.id for e in answer.data] == [3, 4]
    assert (answer.meta.current_page, answer.links.next) == (2, "/api/v1/customers/3/ledger?page=3")
    assert service.requests[1].url.params["page"] == "2"


async def test_the_async_iterator_reads_every_page(service: Scripted) -> None:
    """CLIENT-5"""
    service.queue(page(1, 2, [1, 2]), page(2, 2, [3]))
    async with service.async_client() as loyalty:
        ids = [entry.id async for entry in loyalty.iter_ledger_entries(3, per_page=2)]
    assert ids == [1, 2, 3]


def test_an_iteration_starts_at_the_page_it_is_given(service: Scripted) -> None:
    """CLIENT-5: ``page`` of an ``iter_`` method is the first page read, then the pages after it."""
    service.queue(page(2, 3, [3, 4]), page(3, 3, [5]))
    with service.client() as loyalty:
        ids = [entry.id for entry in loyalty.iter_ledger_entries(3, page=2, per_page=2)]
    assert ids == [3, 4, 5]
    assert [r.url.params["page"] for r in service.requests[1:]] == ["2", "3"]


async def test_an_async_iteration_starts_at_the_page_it_is_given(service: Scripted) -> None:
    """CLIENT-5"""
    service.queue(page(3, 3, [5]))
    async with service.async_client() as loyalty:
        ids = [entry.id async for entry in loyalty.iter_ledger_entries(3, page=3)]
    assert ids == [5]
    assert [r.url.params["page"] for r in service.requests[1:]] == ["3"]
