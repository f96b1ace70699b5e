"""The example basket of the earn-rule and campaign pages: a few lines typed in, scored by the engine
the till's preview uses, so a shop sees what each rule and campaign would pay before a customer buys."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from litestar import Request

from loyalty_core.earning.example_basket import score_example
from loyalty_core.earning.rules import RuleResult
from loyalty_core.earning.terms import LineItem, Purchase
from loyalty_portal.access import Cfg, Db
from loyalty_portal.forms import MAX_INT, Form

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
        sku = form.text(f"sku_{n}")
        quantity = form.whole(f"quantity_{n}", low=1, high=10_000)
        amount = form.whole(f"amount_{n}", low=0)
        if sku is None and quantity is None and amount is None:
            continue
        if quantity is None and f"quantity_{n}" not in form.problems:
            quantity = 1
        if amount is None and f"amount_{n}" not in form.problems:
            form.problems.setdefault(f"amount_{n}", []).append("The line's price in cents is required.")
        if quantity is not None and amount is not None:
            items.append(LineItem(quantity, sku))
            total += quantity * amount
    if total > MAX_INT:
        form.problems.setdefault("amount_1", []).append(f"The basket may total at most {MAX_INT} cents.")
    if not items and not form.problems:
        form.problems.setdefault("amount_1", []).append("Enter at least one line.")
    branch = form.text("branch", max_length=64)
    return None if form.problems else Purchase(total, branch, tuple(items))


async def preview_context(request: Request[Any, Any, Any], vendor_id: int, db: Db, config: Cfg) -> dict[str, Any]:
    """What the page shows of the example basket in the query, if one was sent (EARN-11)."""
    if "preview" not in request.query_params:
        return {"basket": {}, "scored": None, "basket_problems": {}}
    form = Form(dict(request.query_params.items()))
    purchase = basket_of(form)
    scored = None
    if purchase is not None:
        scoring = await score_example(db, vendor_id, purchase, config.clock.now())
        scored = Scored(purchase.total_amount, scoring.points_earned, scoring.rules_applied)
    return {"basket": form.raw, "scored": scored, "basket_problems": form.problems}
