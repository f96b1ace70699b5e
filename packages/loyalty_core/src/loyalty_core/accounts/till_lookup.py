"""A till's lookup as one prepared psycopg statement (CUSTOMER-8; MERGE-3).

The plan starts from a unique index whatever the table statistics say: the identifier (or the
external id) is found first through ``uq_customer_identifiers_vendor_value`` (or
``uq_customers_vendor_external_id``) in a MATERIALIZED step, so PostgreSQL cannot choose to walk the
vendor's customers instead (as it may when statistics lag behind the tables, right after a bulk
registration, before autovacuum has analysed them). An identifier left on a merged account answers
the account that stays, in the same statement. It rides on the token check's statement
(``CompanionRead``), in autocommit on the request's connection: no BEGIN, no COMMIT, one round trip
for the whole request.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from loyalty_core.customer_columns import CUSTOMER_COLUMNS, customer_view
from loyalty_core.customers import errors as e
from loyalty_core.customers.models import CustomerStatus
from loyalty_core.customers.reads.customer import CustomerView
from loyalty_core.customers.till_holder import HOLDER_BY_IDENTIFIER
from loyalty_core.tenancy.till_token_check import CompanionRead, TokenCheck, VendorScope, riding
from loyalty_core.till_sql import Params, statements_of

SQL = statements_of(__name__)


class ByIdentifier(Params, frozen=True):
    """The lookup's own parameters; its vendor is the token check's (or the caller's)."""

    identifier: str
    now: datetime


class ByExternalId(Params, frozen=True):
    external_id: str
    now: datetime


_CUSTOMER = f"""
SELECT {CUSTOMER_COLUMNS}
FROM holder h
JOIN customers c ON c.vendor_id = %(vendor_id)s AND c.id = h.id
LEFT JOIN wallets w ON w.vendor_id = c.vendor_id AND w.customer_id = c.id
WHERE c.status <> '{CustomerStatus.ANONYMIZED}'
"""

BY_IDENTIFIER = SQL("by_identifier", "\nWITH " + HOLDER_BY_IDENTIFIER + _CUSTOMER, ByIdentifier, VendorScope)

BY_EXTERNAL_ID = SQL(
    "by_external_id",
    """
WITH holder AS MATERIALIZED (
    SELECT id FROM customers WHERE vendor_id = %(vendor_id)s AND external_id = %(external_id)s
)"""
    + _CUSTOMER,
    ByExternalId,
    VendorScope,
)

SQL("by_identifier_riding", riding(BY_IDENTIFIER), ByIdentifier, TokenCheck)
SQL("by_external_id_riding", riding(BY_EXTERNAL_ID), ByExternalId, TokenCheck)


def lookup_read(*, now: datetime, identifier: str | None = None, external_id: str | None = None) -> CompanionRead:
    """By ``external_id`` when given, else by any active identifier, retired types included; the
    vendor is the statement's ``%(vendor_id)s``. The balance leaves out the points past their end at
    ``now`` (the next deduction expires them), so what a till shows is what it can spend."""
    if external_id is not None:
        return CompanionRead(BY_EXTERNAL_ID, ByExternalId(external_id=external_id, now=now))
    return CompanionRead(BY_IDENTIFIER, ByIdentifier(identifier=identifier or "", now=now))


def customer_found(row: dict[str, Any] | None) -> CustomerView:
    """The customer :func:`lookup_read` found (its row by column name), or CUSTOMER_NOT_FOUND."""
    if row is None:
        raise e.CustomerNotFound("No customer of the vendor has this identifier.")
    return customer_view(row)
