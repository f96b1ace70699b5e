"""The customer as the API shows it, as the columns of one till statement, and how such a row
becomes the read model: one declaration for the till's lookup (``accounts.till_lookup``) and the
purchase's and return's tier moves (``earning.till_tier_moves``), which read the same resource.

It sits below both areas and above the wallet, the tiers and the referrals, whose parts of the
resource (the spendable balance, the tier's facts, whether codes show) it joins; the ORM's reads
select the same columns through ``accounts.reads.customer.customer_rows``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loyalty_core.customers.reads.customer import CustomerView, view_of
from loyalty_core.referrals.reads import code_of, codes_shown_sql
from loyalty_core.tiers.reads import customer_tier, tier_facts_sql
from loyalty_core.wallet.till_pending import AVAILABLE_SQL

TIER_FACTS = tier_facts_sql(vendor="c.vendor_id", customer="c.id", merged_into="c.merged_into_id", now="%(now)s")
"""The customer's tier (TIER-6) in the statement itself: no more round trips, only primary keys."""

CUSTOMER_COLUMNS = f"""c.id, c.vendor_id, c.first_name, c.last_name, c.email, c.phone, c.date_of_birth,
       c.customer_since, c.external_id, c.locale, c.status, c.merged_into_id, c.marketing_consent,
       c.marketing_consent_statement_version, c.marketing_consent_granted_at, c.marketing_consent_withdrawn_at,
       c.marketing_consent_source, c.marketing_consent_recorded_by, c.created_at, c.updated_at, c.referred_by_id,
       (coalesce(w.balance, 0) - coalesce((
           SELECT sum(l.remaining) FROM point_lots l
           WHERE l.wallet_id = w.id AND l.remaining > 0 AND l.expires_at <= %(now)s), 0)
       + {AVAILABLE_SQL})::bigint AS balance,
       (SELECT coalesce(json_agg(json_build_array(i.type, i.value, i.active)
                                 ORDER BY i.assigned_at ASC NULLS FIRST, i.id), '[]'::json)
          FROM customer_identifiers i WHERE i.vendor_id = c.vendor_id AND i.customer_id = c.id) AS identifier_list,
       ({TIER_FACTS}) AS tier_facts,
       {codes_shown_sql(vendor="c.vendor_id")} AS referral_codes"""
"""The customer ``c`` (its wallet ``w`` left-joined) as the API shows it, at ``%(now)s``: the balance
leaves out the points past their end and counts the pending points already due (LEDGER-9, PENDING),
the identifiers oldest first, the tier's facts (TIER-6) and whether codes show (REFERRAL-6)."""


def customer_view(row: Mapping[Any, Any]) -> CustomerView:
    """A row of :data:`CUSTOMER_COLUMNS` (or of the ORM's ``customer_rows``) as the read model, its
    tier computed from ``tier_facts`` and its referral code from ``referral_codes``."""
    return view_of(row, customer_tier(row), code_of(row))
