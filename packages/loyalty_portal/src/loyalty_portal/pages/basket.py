"""The example basket of the earn-rule and campaign pages: a few lines typed in, scored by the engine
the till's preview uses, so a shop sees what each rule and campaign would pay before a customer buys."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from litestar import Request

from loyalty_core.bounds import BRANCH_KEY, ITEM_QUANTITY, ITEM_TEXT, TOTAL_AMOUNT
from loyalty_core.earning.reads import score_example
from loyalty_core.earning.rules.engine import RuleResult
from loyalty_core.earning.rules.terms import LineItem, Purchase
from loyalty_core.numbers import euros, whole_range
from loyalty_core.tiers.reads import paying_ladder_of
from loyalty_portal.access import Cfg, Db
from loyalty_portal.forms import Form

LINES = 3
"""Rows of the example basket; an empty row is skipped."""


@dataclass(frozen=True, slots=True)
class Scored:
    total_amount: int
    points_earned: int
    rules: tuple[RuleResult, ...]


def basket_of(form: Form) -> Purchase | None:
    """The basket typed in, or None (with the form's problems) when a line cannot be read."""
    items, total = [], 0
    for n in range(1, LINES + 1):
        # a line as the preview endpoint's item takes it: sku, quantity, and a unit price typed in
        # euros that the purchase totals in cents
        sku = form.text(f"sku_{n}", ITEM_TEXT)
        quantity = form.whole(f"quantity_{n}", ITEM_QUANTITY)
        amount = form.money(f"amount_{n}")
        if sku is None and quantity is None and amount is None:
            continue
        if quantity is None and f"quantity_{n}" not in form.problems:
            quantity = 1
        if amount is None and f"amount_{n}" not in form.problems:
            form.problems.setdefault(f"amount_{n}", []).append("The line's unit price in euros is required.")
        if quantity is not None and amount is not None:
            items.append(LineItem(quantity, sku))
            total += quantity * amount
    low, high = whole_range(TOTAL_AMOUNT)
    if items and not low <= total <= high:
        form.problems.setdefault("amount_1", []).append(f"The basket may total from {euros(low)} to {euros(high)}.")
    if not items and not form.problems:
        form.problems.setdefault("amount_1", []).append("Enter at least one line.")
    branch = form.text("branch", BRANCH_KEY)
    return None if form.problems else Purchase(total, branch, tuple(items))


async def preview_context(request: Request[Any, Any, Any], vendor_id: int, db: Db, config: Cfg) -> dict[str, Any]:
    """What the page shows of the example basket in the query, if one was sent (EARN-11)."""
    ladder = await paying_ladder_of(db, vendor_id)
    rungs = ladder.rungs if ladder is not None else ()
    if "preview" not in request.query_params:
        return {"basket": {}, "scored": None, "basket_problems": {}, "tiers": rungs}
    form = Form(dict(request.query_params.items()))
    purchase = basket_of(form)
    # TIER-10: the basket scored for a customer of the tier chosen (none: no tier's entry)
    tier = next((rung for rung in rungs if rung.key == form.raw.get("tier")), None)
    scored = None
    if purchase is not None:
        scoring = await score_example(db, vendor_id, purchase, config.clock.now(), tier)
        scored = Scored(purchase.total_amount, scoring.points_earned, scoring.rules_applied)
    return {"basket": form.raw, "scored": scored, "basket_problems": form.problems, "tiers": rungs}
