"""The tier ladder (owners only, TIER-14): one form holds the whole ladder, its basis, period and
grace and one row per tier, saved whole through the ladder's one writer (``TierService``, the
API's ``PUT``); ``Add tier`` shows the form again with one more row (no script needed), and each
tier shows how many customers would sit in it under the ladder shown. A threshold is typed in
euros for a spend ladder (cents stored) and in whole points for a points ladder."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.params import FromQuery

from loyalty_core.bounds import (
    TIER_DESCRIPTION,
    TIER_GRACE,
    TIER_KEY,
    TIER_MULTIPLIER,
    TIER_NAME,
    TIER_PERIOD,
    TIER_THRESHOLD,
)
from loyalty_core.errors import DomainError, NotFound
from loyalty_core.numbers import euro_amount
from loyalty_core.tiers.reads import customers_per_tier
from loyalty_core.tiers.rules import MAX_TIERS, Ladder, Rung, TierBasis
from loyalty_core.tiers.services import LadderData, RungData, TierService
from loyalty_portal.access import OWNER_ONLY, Cfg, Db, Me
from loyalty_portal.forms import Form, field_problems, refused_save
from loyalty_portal.once import REPEATABLE
from loyalty_portal.web import MOUNT_PATH, render, see_other

CURRENT = "Tiers"
FIELDS = ("key", "name", "threshold", "multiplier_percent", "description")
TYPED = ("key", "name", "threshold", "description")
"""A row with none of these typed is empty (its multiplier shows 100 until changed) and skipped."""


@dataclass(frozen=True, slots=True)
class Row:
    """One tier's row as the form shows it: the raw values typed, and its preview count."""

    values: dict[str, str]
    customers: int | None = None


def _values(ladder: Any) -> dict[str, str]:
    """The form's values of a stored ladder (``tiers.resources.Ladder``)."""
    spend = ladder.basis == TierBasis.SPEND
    values = {
        "basis": ladder.basis,
        "period_months": str(ladder.period_months),
        "grace_months": str(ladder.grace_months),
        "rows": str(len(ladder.tiers)),
    }
    for n, tier in enumerate(ladder.tiers, start=1):
        values |= {
            f"key_{n}": tier.key,
            f"name_{n}": tier.name,
            f"threshold_{n}": euro_amount(tier.threshold) if spend else str(tier.threshold),
            f"multiplier_percent_{n}": str(tier.multiplier_percent),
            f"description_{n}": tier.description or "",
        }
    return values


def _rows(form: Form) -> int:
    count = form.whole("rows", None) or 1
    return max(1, min(count, MAX_TIERS))


def ladder_of_form(form: Form) -> LadderData | None:
    """The ladder typed in, or None (with the form's problems by field) when a field cannot be read.
    A row left wholly empty is skipped."""
    basis = form.raw.get("basis", "")
    if basis not in (TierBasis.SPEND, TierBasis.POINTS):
        form.problems.setdefault("basis", []).append("Spend or points.")
    period = form.whole("period_months", TIER_PERIOD, required=True)
    grace = form.whole("grace_months", TIER_GRACE, required=True)
    rungs: list[RungData] = []
    for n in range(1, _rows(form) + 1):
        if not any(form.raw.get(f"{field}_{n}", "").strip() for field in TYPED):
            continue
        key = form.text(f"key_{n}", TIER_KEY, required=True)
        name = form.line(f"name_{n}", TIER_NAME, required=True)
        if basis == TierBasis.SPEND:
            threshold = form.money(f"threshold_{n}", TIER_THRESHOLD, required=True)
        else:
            threshold = form.whole(f"threshold_{n}", TIER_THRESHOLD, required=True)
        percent = form.whole(f"multiplier_percent_{n}", TIER_MULTIPLIER, required=True)
        description = form.text(f"description_{n}", TIER_DESCRIPTION)
        if key is not None and name is not None and threshold is not None and percent is not None:
            rungs.append(RungData(key, name, threshold, percent, description))
    if not rungs and not form.problems:
        form.problems.setdefault("key_1", []).append("A ladder has at least one tier.")
    if form.problems or period is None or grace is None:
        return None
    return LadderData(TierBasis(basis), rungs, period, grace)


def _rule_ladder(data: LadderData) -> Ladder:
    rungs = tuple(Rung(0, r.key, r.name, r.threshold, r.multiplier_percent) for r in data.tiers)
    return Ladder(data.basis, data.period_months, data.grace_months, rungs)


async def page(
    db: Db,
    config: Cfg,
    visitor: Me,
    *,
    status: int = 200,
    values: dict[str, str] | None = None,
    preview: LadderData | None = None,
    **context: Any,
) -> Response[str]:
    """The form with ``values`` (the stored ladder when None), and each row's preview count under
    ``preview`` (the stored ladder when None and ``values`` is)."""
    if values is None:
        try:
            stored = await TierService(db, config.clock).get(visitor.vendor_id)
        except NotFound:
            values = {"basis": TierBasis.SPEND, "period_months": "12", "grace_months": "0", "rows": "1"}
        else:
            values = _values(stored)
            preview = ladder_of_form(Form(dict(values)))
    counts: list[int] = []
    if preview is not None and preview.tiers:
        counts = await customers_per_tier(db, visitor.vendor_id, _rule_ladder(preview), config.clock.now())
    rows = []
    count = _rows(Form(dict(values)))
    shown = iter(counts)
    for n in range(1, count + 1):
        row = {field: values.get(f"{field}_{n}", "") for field in FIELDS}
        filled = any(row[field].strip() for field in TYPED)
        rows.append(Row(row, next(shown, None) if filled and counts else None))
    return render(
        "tiers.html",
        status=status,
        visitor=visitor,
        current=CURRENT,
        values=values,
        rows=rows,
        max_tiers=MAX_TIERS,
        **context,
    )


class TiersController(Controller):
    path = "/tiers"
    opt = OWNER_ONLY

    @get("/")
    async def show(self, visitor: Me, db: Db, config: Cfg, done: FromQuery[str | None] = None) -> Response[Any]:
        return await page(db, config, visitor, done="The ladder is saved." if done else None)

    @post("/rows", opt=REPEATABLE)
    async def rows(self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        """``Add tier`` and ``Preview``: the form again as typed (one more row for ``Add tier``),
        with the preview of the ladder typed when it reads; changes nothing."""
        form = await Form.of(request)
        values = dict(form.raw)
        preview = ladder_of_form(form)
        if "add" in values:
            values["rows"] = str(min(_rows(Form(dict(values))) + 1, MAX_TIERS))
        return await page(db, config, visitor, values=values, preview=preview, problems=form.problems)

    @post("/")
    async def save(self, request: Request[Any, Any, Any], visitor: Me, db: Db, config: Cfg) -> Response[Any]:
        form = await Form.of(request)
        data = ladder_of_form(form)
        try:
            form.check()
            assert data is not None
            async with db.begin_nested():
                await TierService(db, config.clock).put_ladder(visitor.vendor_id, data)
        except DomainError as refused:
            return await page(db, config, visitor, **refused_save(refused, form.raw, _field_problems(refused)))
        return see_other(f"{MOUNT_PATH}/tiers?done=1")


def _field_problems(refused: DomainError) -> dict[str, list[str]]:
    """The API's field paths (``tiers.2.threshold``) as the form's fields (``threshold_3``)."""
    problems: dict[str, list[str]] = {}
    for path, messages in field_problems(refused).items():
        parts = path.split(".")
        if len(parts) == 3 and parts[0] == "tiers" and parts[1].isdigit():
            problems[f"{parts[2]}_{int(parts[1]) + 1}"] = messages
        else:
            problems[path] = messages
    return problems
