"""The CTEs that keep a customer's qualifying months (TIER-2), lent to the till's purchase and return
statements so the month is written in the write's own statement, after the wallet's lock (no extra
round trip, the one lock order of ``wallet/till_protocol.py``).

A purchase adds its cents and points to its UTC month (the meter's ``period``); a return takes its
cents and its points reversed and unrecovered out of the month its purchase was made in, on the
account the purchase was made on."""

from __future__ import annotations

PURCHASE_MONTH = """tier_month AS (
    INSERT INTO tier_months AS tmo (vendor_id, customer_id, month, spend, points)
    SELECT %(vendor_id)s, %(customer_id)s, %(period)s, %(total_amount)s, %(amount)s
    FROM t
    ON CONFLICT (vendor_id, customer_id, month)
    DO UPDATE SET spend = tmo.spend + excluded.spend, points = tmo.points + excluded.points
)"""
"""Hangs off ``t``, the purchase's row: a purchase the meter refused adds nothing."""

RETURN_MONTH = """tier_month AS (
    UPDATE tier_months tmo
    SET spend = tmo.spend - %(returned_amount)s,
        points = tmo.points - (%(points_reversed)s + %(points_unrecovered)s)
    FROM transactions bought
    WHERE bought.vendor_id = %(vendor_id)s AND bought.id = %(transaction_id)s
      AND tmo.vendor_id = bought.vendor_id AND tmo.customer_id = bought.customer_id
      AND tmo.month = date_trunc('month', bought.created_at AT TIME ZONE 'UTC')::date
)"""
