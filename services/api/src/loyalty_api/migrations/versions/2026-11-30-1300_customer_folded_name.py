"""customer folded name: ``loyalty_folded_name(first_name, last_name)``, the name as the customer search
compares it (lower case, Latin accents dropped), declared immutable so an index can hold it; and
the ``pg_trgm`` extension, whose trigram index the next revision builds on it

The search folds a name with ``translate(lower(concat_ws(' ', first, last)), ...)``; ``concat_ws`` is
only stable in PostgreSQL's catalogue (it takes any type), though over two texts it always answers
the same, so the function wraps it and says so. The accent table is frozen here: the search's
``loyalty_core.text.FOLD_TABLE`` is the same, and a change to it needs a new revision of this function
(and a reindex). No table is touched.

Revision ID: 7a1c3e5b9d20
Revises: 5e0b2c7a9d13
Create Date: 2026-11-29 12:00:00+00:00
"""

from __future__ import annotations

from alembic import op

revision = "7a1c3e5b9d20"
down_revision = "5e0b2c7a9d13"
branch_labels = None
depends_on = None

ACCENTED = "ÀÁÂÃÄÅàáâãäåÇçÈÉÊËèéêëÌÍÎÏìíîïÑñÒÓÔÕÖØòóôõöøÙÚÛÜùúûüÝýÿŠšŽž"
PLAIN = "aaaaaaaaaaaacceeeeeeeeiiiiiiiinnoooooooooooouuuuuuuuyyysszz"


def upgrade() -> None:
    # where the server ships it: the embedded PostgreSQL has no contrib, and its search goes unindexed
    op.execute(
        "DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm')"
        " THEN CREATE EXTENSION IF NOT EXISTS pg_trgm; END IF; END $$"
    )
    op.execute(
        "CREATE FUNCTION loyalty_folded_name(first_name text, last_name text) RETURNS text"
        " LANGUAGE sql IMMUTABLE PARALLEL SAFE"
        f" RETURN translate(lower(concat_ws(' ', first_name, last_name)), '{ACCENTED}', '{PLAIN}')"
    )


def downgrade() -> None:
    op.execute("DROP FUNCTION loyalty_folded_name(text, text)")
