"""An example basket scored by the engine the till's preview uses (EARN-11), for a shop trying out its
earn rules and campaigns before a customer buys: no customer, so no moment campaign pays."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.db import driver_connection
from loyalty_core.earning.rules import Scoring, score
from loyalty_core.earning.terms import CustomerFacts, Purchase
from loyalty_core.earning.till_terms import fetch_terms, paying
from loyalty_core.tenancy.services import ceilings


async def score_example(session: AsyncSession, vendor_id: int, purchase: Purchase, now: datetime) -> Scoring:
    """The points ``purchase`` would earn now under the vendor's active terms and plan; writes nothing."""
    plan = await ceilings.plan_of(session, vendor_id)
    terms = await fetch_terms(await driver_connection(session), vendor_id, 0)
    campaigns = paying(terms.campaigns, transaction=plan.feature_campaigns, moments=plan.feature_customer_moments)
    return score(purchase, CustomerFacts(), terms.earn_rules, campaigns, now)
