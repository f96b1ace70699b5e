"""How a till's statement finds the customer behind an identifier (CUSTOMER-3,
CUSTOMER-8, MERGE-3), as SQL text the till paths of every area start their statements with."""

from __future__ import annotations

from loyalty_core.customers.models import CustomerStatus
from loyalty_core.till_sql import Params, statements_of

SQL = statements_of(__name__)


class HolderParams(Params, frozen=True):
    """The placeholders of :data:`HOLDER_BY_IDENTIFIER`, which every statement that embeds it binds."""

    vendor_id: int
    identifier: str


HOLDER_BY_IDENTIFIER = f"""found AS MATERIALIZED (
    SELECT customer_id FROM customer_identifiers
    WHERE vendor_id = %(vendor_id)s AND lower(value) = lower(%(identifier)s) AND active AND customer_id IS NOT NULL
), holder AS MATERIALIZED (
    SELECT coalesce(c.merged_into_id, c.id) AS id
    FROM found f JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = f.customer_id
    WHERE c.status <> '{CustomerStatus.ANONYMIZED}'
)"""
"""Two CTEs every till call that takes an identifier starts with: ``holder`` is the customer the
identifier ``%(identifier)s`` of vendor ``%(vendor_id)s`` finds, found through the unique index on the
identifier's value whatever the statistics say; a card left on a merged account finds the account
that stays."""


HOLDER_WALLET_LOCK = SQL(
    "holder_wallet_lock",
    f"""
WITH {HOLDER_BY_IDENTIFIER}
SELECT w.id AS wallet_id FROM holder h
JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = h.id AND c.status <> '{CustomerStatus.ANONYMIZED}'
JOIN wallets w ON w.vendor_id = %(vendor_id)s AND w.customer_id = c.id
FOR UPDATE OF w
""",
    HolderParams,
)
"""The wallet of the account the identifier finds, locked: a till write that credits or debits it
takes this lock before it reads anything it decides on, so a merge of that account (which needs
the same lock) either committed before the read, which then sees it, or waits for the write and
then moves what it wrote. A read that finds another wallet than the one locked (the card moved
in between) runs again under the right lock (``wallet.till_protocol``)."""
