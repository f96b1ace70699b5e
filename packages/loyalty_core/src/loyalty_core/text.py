"""Text shapes every area and the HTTP layer check the same way: an email address, control
characters in text that reaches a mail header or a pass, undecodable bytes, and names compared
without case or accents by the searches."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import func

MAX_EMAIL_LENGTH = 254
"""The longest address a mail server takes in a ``RCPT TO`` path."""

_LOCAL = re.compile(r"[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~.]+")
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


def is_email(value: str) -> bool:
    """``local@domain`` as mail is sent here: one ``@``; a local part of ASCII letters, digits and
    ``!#$%&'*+-/=?^_`{|}~.`` without ``=?`` (so no quoted strings, brackets, spaces or RFC 2047
    encoded words, which a mail library would decode into another address); a domain of
    dot-separated letter-digit-hyphen labels with at least one dot and a top label that is not all
    digits (no IP address, bracketed or bare); 254 characters at most."""
    if len(value) > MAX_EMAIL_LENGTH or value.count("@") != 1:
        return False
    local, domain = value.split("@")
    if not _LOCAL.fullmatch(local) or "=?" in local:
        return False
    labels = domain.split(".")
    return len(labels) >= 2 and all(_LABEL.fullmatch(label) for label in labels) and not labels[-1].isdigit()


def mail_key(address: str) -> str:
    """How suppressions compare addresses: the domain lowercased (domains know no case), and the
    local part too, so a bounce reported in other letters still stops the mail."""
    return address.strip().lower()


CONTROL = re.compile("[\x00-\x1f\x7f]")
"""C0 control characters and DEL: a CR or LF in a mail header splits it, and wallets show them raw."""
CONTROL_MESSAGE = "The value must not contain control characters."

SURROGATE = re.compile("[\udc80-\udcff]")
"""What bytes that were not UTF-8 become when decoded with ``surrogateescape``."""


_ACCENTED = "ÀÁÂÃÄÅàáâãäåÇçÈÉÊËèéêëÌÍÎÏìíîïÑñÒÓÔÕÖØòóôõöøÙÚÛÜùúûüÝýÿŠšŽž"
_PLAIN = "aaaaaaaaaaaacceeeeeeeeiiiiiiiinnoooooooooooouuuuuuuuyyysszz"
FOLD_TABLE = str.maketrans(_ACCENTED, _PLAIN)
"""Latin letters with accents to their plain lower-case letter, so a search for "jose" finds "José"."""


def fold(value: str) -> str:
    """Lower case without accents: how names are compared by a search (``folded`` is its SQL twin)."""
    return value.lower().translate(FOLD_TABLE)


def like_part(value: str) -> str:
    """A LIKE pattern matching ``value`` anywhere, its own ``%``, ``_`` and ``\\`` taken literally."""
    escaped = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


FOLDED_NAME_FUNCTION = (
    "CREATE OR REPLACE FUNCTION loyalty_folded_name(first_name text, last_name text) RETURNS text"
    " LANGUAGE sql IMMUTABLE PARALLEL SAFE"
    f" RETURN translate(lower(concat_ws(' ', first_name, last_name)), '{_ACCENTED}', '{_PLAIN}')"
)
"""``fold`` of a customer's name in SQL, immutable so an index holds it: ``concat_ws`` is only stable
in PostgreSQL's catalogue (it takes any type), though over two texts it always answers the same.
The migration that made it (``customer_folded_name``) keeps its own copy, as migrations do; the
schema of the suites that skip migrations is made with this one."""

TRIGRAMS_WHERE_AVAILABLE = (
    "DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm')"
    " THEN CREATE EXTENSION IF NOT EXISTS pg_trgm; END IF; END $$"
)
"""``pg_trgm`` where the server ships it (PostgreSQL's contrib, in every packaged server); the
embedded PostgreSQL of a first start has none, and the search then reads the vendor's customers
without the trigram index (CUSTOMER-17), as it did before the index."""
FOLDED_NAME_INDEX = (
    "DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm')"
    " THEN CREATE INDEX IF NOT EXISTS ix_customers_folded_name ON customers"
    " USING gin (loyalty_folded_name(first_name, last_name) gin_trgm_ops); END IF; END $$"
)
"""The trigram index on the folded name, made only where ``pg_trgm`` is installed."""


def folded_name(first_name: Any, last_name: Any) -> Any:
    """SQL for ``fold(first_name + " " + last_name)`` (a missing part left out), as the database's
    immutable ``loyalty_folded_name`` computes it with this module's accent table: the expression of
    the customers' trigram index, so a search by part of a name reads only the names holding it."""
    return func.loyalty_folded_name(first_name, last_name)


def folded(column: Any) -> Any:
    """SQL for ``fold(column)``: lower() then the same table of accents (upper-case accented letters
    are in the table too, so a database whose lower() leaves them alone still folds them)."""
    return func.translate(func.lower(column), _ACCENTED, _PLAIN)
