"""The registry of typed, versioned event payloads: every type has one current struct, every stored
version has a reader, and an event stored before its struct grew still reads as the new struct."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest
from msgspec.structs import asdict
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import FixedClock
from loyalty_core.events.models import PING, EventType
from loyalty_core.events.reads import one_event
from loyalty_core.events.rules.payloads import Registry, UnreadablePayload, current, older
from loyalty_core.events.services.recording import record_event
from loyalty_core.shown_events import EVENTS
from loyalty_core.tenancy.resources import BranchShown
from loyalty_core.vouchers.events import VoucherUsed
from tests.support.vendors import make_vendor

AT = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


class VoucherUsedV2(VoucherUsed):
    """``voucher.used`` after it grew a field, as a later release would declare it."""

    version = 2
    redeemed_by: str | None = None


class VoucherUsedV3(VoucherUsedV2):
    """And after it gained ``till``, which version 2's rows take from their ``redeemed_by``: a reader
    function of that version's own."""

    version = 3
    till: str = ""


def _used(**changed: Any) -> VoucherUsed:
    fields: dict[str, Any] = {
        "code": "V-1",
        "customer_id": 7,
        "description": "Ten off",
        "valid_until": date(2026, 6, 1),
        "branches": [BranchShown("n", "North", "store")],
        "discount_type": "fixed",
        "discount_value": 1000,
        "status": "used",
        "used_at": AT,
    }
    return VoucherUsed(**{**fields, **changed})


def test_every_event_type_has_one_current_payload_struct() -> None:
    """EVENT-13: each event type (and the endpoints' ping) is in the registry with the struct that
    names it, so no type is recorded in a shape nothing reads."""
    assert EVENTS.types() == {*EventType, PING}
    assert {t: EVENTS.payload_of(t).event_type for t in EVENTS.types()} == {t: t for t in EVENTS.types()}


def test_a_version_no_line_reads_fails_loudly() -> None:
    """EVENT-13: an event stored as a version the registry does not know is refused, not shown in a
    shape that is not its own."""
    with pytest.raises(UnreadablePayload, match=r"voucher\.used events stored as version 2"):
        EVENTS.shown(EventType.VOUCHER_USED, 2, {"code": "V-1"}, AT)
    with pytest.raises(UnreadablePayload, match=r"voucher\.spent events stored as version 1"):
        EVENTS.shown("voucher.spent", 1, {"code": "V-1"}, AT)


def test_a_registry_refuses_lines_that_disagree() -> None:
    """EVENT-13: two lines for one stored version, a version the struct has not reached, two current
    structs of one type, or a current version without its line are refused when the registry is
    built, at import, not when an event is read."""
    with pytest.raises(ValueError, match="version 1 has two lines"):
        Registry(current(VoucherUsed), older(VoucherUsedV2, 1), current(VoucherUsedV2))
    with pytest.raises(ValueError, match="version 3 is not a version of VoucherUsedV2"):
        Registry(current(VoucherUsedV2), older(VoucherUsedV2, 3))
    with pytest.raises(ValueError, match="two current structs: VoucherUsed, VoucherUsedV2"):
        Registry(current(VoucherUsed), current(VoucherUsedV2))
    with pytest.raises(ValueError, match="no line reads its current version 2"):
        Registry(older(VoucherUsedV2, 1))


async def test_an_event_stored_before_its_struct_grew_reads_as_the_new_version(
    db: AsyncSession, clock: FixedClock
) -> None:
    """EVENT-13: an event stored by version 1 of ``voucher.used`` keeps its version; once version 2
    adds a field, the registry reads the old event as version 2 with that field at its default,
    and an event stored by version 2 as stored."""
    vendor = await make_vendor(db)
    old_id = await record_event(db, clock, vendor.id, _used(), customer_id=7)
    stored = await one_event(db, vendor.id, old_id)
    assert stored["payload_version"] == 1
    as_v1 = EVENTS.shown(stored["type"], stored["payload_version"], stored["data"], stored["created_at"])
    assert "redeemed_by" not in as_v1

    grown = EVENTS.with_lines(current(VoucherUsedV2), older(VoucherUsedV2, 1))
    new_id = await record_event(db, clock, vendor.id, VoucherUsedV2(**asdict(_used(code="V-2")), redeemed_by="till 3"))
    fresh = await one_event(db, vendor.id, new_id)

    assert fresh["payload_version"] == 2
    assert grown.shown(stored["type"], 1, stored["data"], stored["created_at"]) == {**as_v1, "redeemed_by": None}
    assert grown.shown(fresh["type"], 2, fresh["data"], fresh["created_at"]) == {
        **as_v1,
        "code": "V-2",
        "redeemed_by": "till 3",
    }
    with pytest.raises(UnreadablePayload):
        EVENTS.shown(fresh["type"], 2, fresh["data"], fresh["created_at"])


async def test_an_older_version_reads_through_its_own_function(db: AsyncSession, clock: FixedClock) -> None:
    """EVENT-13: when a new version cannot be read from an older row by defaults alone, that
    version's line takes a reader function, and each stored version is read by its own."""
    vendor = await make_vendor(db)
    v1 = await one_event(db, vendor.id, await record_event(db, clock, vendor.id, _used()))
    v2_payload = VoucherUsedV2(**asdict(_used()), redeemed_by="till 3")
    v2 = await one_event(db, vendor.id, await record_event(db, clock, vendor.id, v2_payload))

    def v2_with_till(data: Any, at: datetime) -> dict[str, Any]:
        return {**data, "till": data["redeemed_by"] or "unknown"}

    registry = EVENTS.with_lines(
        current(VoucherUsedV3),
        older(VoucherUsedV3, 2, read=v2_with_till),
        older(VoucherUsedV3, 1),
    )

    assert registry.shown(v1["type"], 1, v1["data"], AT) == {**v1["data"], "redeemed_by": None, "till": ""}
    assert registry.shown(v2["type"], 2, v2["data"], AT) == {**v2["data"], "till": "till 3"}
