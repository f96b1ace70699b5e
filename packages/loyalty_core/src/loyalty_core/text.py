"""Text shapes every area and the HTTP layer check the same way: an email address, undecodable bytes,
and names compared without case or accents by the searches."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import func

EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s.]+")
"""Something@domain.tld: enough to catch typing mistakes without refusing real addresses."""

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


def folded(column: Any) -> Any:
    """SQL for ``fold(column)``: lower() then the same table of accents (upper-case accented letters
    are in the table too, so a database whose lower() leaves them alone still folds them)."""
    return func.translate(func.lower(column), _ACCENTED, _PLAIN)
