"""Phone-book order and accent-blind search of product names (CATALOGUE-5), as pure functions.

A name is folded once, when it is written, into the ``name_sort`` column; the list orders by that
column and an index, so neither ordering nor search loads the catalogue into memory.
"""

from __future__ import annotations

import unicodedata

NAME_SORT_MAX = 300
"""Characters of the folded name kept for ordering. Folding can lengthen a name (``ß`` becomes
``ss``); the cap keeps every index entry well under PostgreSQL's b-tree row limit (2704 bytes)
even in four-byte characters, while names that differ only after it fall back to the id order."""


def fold(text: str) -> str:
    """``text`` without case or accents: "Éclair", "ÉCLAIR" and "eclair" all fold to "eclair".

    Compatibility decomposition splits accented letters and ligatures (``ﬁ`` becomes ``fi``);
    the combining marks are then dropped. Decomposing again after case folding catches letters
    whose lower case carries a mark of its own (``İ`` folds to ``i`` plus a dot).
    """
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", text).casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def sort_key(name: str) -> str:
    """The value stored in ``name_sort``; compared byte by byte (collation ``C``)."""
    return fold(name)[:NAME_SORT_MAX]


def contains_pattern(term: str) -> str:
    """A ``LIKE`` pattern (escape character ``\\``) for names holding ``term`` anywhere."""
    escaped = fold(term).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
