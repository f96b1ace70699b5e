"""How many points a return takes back (RETURN-1, RETURN-3): values in, values out (no database,
no clock).

Proration is cumulative so rounding never drifts: after a return, the points due back for the
purchase in total are ``floor(points_earned * returned_total / total_amount)``, and each return is
due the difference from the total due before it. Returning everything, in any number of parts, is
due exactly ``points_earned``; a purchase that earned nothing is due nothing.

What is due is taken only as far as the balance holds it (the balance never goes below 0); the rest
is the return's shortfall, recorded and never recovered by a later return.
"""

from __future__ import annotations

from dataclasses import dataclass


def due_in_total(points_earned: int, total_amount: int, returned_total: int) -> int:
    """Points due back once ``returned_total`` of ``total_amount`` cents came back."""
    if not 0 <= returned_total <= total_amount:
        raise ValueError("a purchase returns between nothing and its total")
    return points_earned * returned_total // total_amount


def due_now(points_earned: int, total_amount: int, returned_before: int, amount: int) -> int:
    """Points due back for a return of ``amount`` after ``returned_before`` cents came back earlier."""
    return due_in_total(points_earned, total_amount, returned_before + amount) - due_in_total(
        points_earned, total_amount, returned_before
    )


@dataclass(frozen=True, slots=True)
class Reversal:
    points_reversed: int
    """Taken from the balance by this return."""
    points_unrecovered: int
    """Due but no longer on the balance (already spent or expired): the shortfall."""


def reversal(due: int, available: int) -> Reversal:
    """What a return due ``due`` points takes from a balance holding ``available`` spendable points."""
    taken = min(due, max(available, 0))
    return Reversal(points_reversed=taken, points_unrecovered=due - taken)
