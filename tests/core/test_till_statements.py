"""The till's statements are checked in whole (``loyalty_core.till_sql``, docs/contributing.md): each
module's ``.sql`` file beside it is what the code composes, every placeholder of a statement is a
field of its parameters' struct and every field is a placeholder of a statement that takes it, so
a renamed or dropped placeholder fails here instead of at a till's first request."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from loyalty_core.till_sql import (
    Params,
    Statement,
    Statements,
    placeholders,
    registered,
    render,
    snapshot_of,
    stale_snapshots,
)

ROOT = Path(__file__).resolve().parents[2]
REFRESH = "after a deliberate change, rewrite them with `uv run --frozen just till-sql` and review the diff"

TILL_MODULES = {
    "loyalty_core.accounts.till_lookup",
    "loyalty_core.customers.till_holder",
    "loyalty_core.earning.till_meter",
    "loyalty_core.earning.till_purchase_find",
    "loyalty_core.earning.till_purchase_reads",
    "loyalty_core.earning.till_purchase_write",
    "loyalty_core.earning.till_return",
    "loyalty_core.earning.till_terms",
    "loyalty_core.earning.till_tier_moves",
    "loyalty_core.redemptions.till_redeem",
    "loyalty_core.redemptions.till_redeem_state",
    "loyalty_core.redemptions.till_verify",
    "loyalty_core.referrals.till_referrals",
    "loyalty_core.tenancy.till_token_check",
    "loyalty_core.wallet.till_posting",
    "loyalty_core.wallet.till_adjust",
}
"""The modules that send the till's statements: lookup, adjustment (and give, through the posting),
purchase, return, redemption, verify, and the token check they ride on."""


def differences(modules: dict[str, Statements]) -> dict[str, str]:
    """Each module whose checked-in file is not what its code composes, with the diff."""
    found = {}
    for module, statements in modules.items():
        path = snapshot_of(module)
        composed = render(statements)
        held = path.read_text(encoding="utf-8") if path.exists() else ""
        if held != composed:
            diff = difflib.unified_diff(
                held.splitlines(keepends=True), composed.splitlines(keepends=True), "checked in", "composed"
            )
            found[str(path.relative_to(ROOT))] = "".join(diff)
    return found


def unbound(statement: Statement) -> set[str]:
    fields = {name for params in statement.params for name in params.__struct_fields__}
    return set(placeholders(statement.text)) - fields


def test_every_checked_in_statement_is_what_the_code_composes() -> None:
    found = differences(registered())
    assert found == {}, f"{sorted(found)} differ from the code; {REFRESH}:\n" + "\n".join(found.values())


def test_no_checked_in_file_outlives_its_statements() -> None:
    assert stale_snapshots(registered()) == [], REFRESH


def test_every_till_module_names_its_statements() -> None:
    modules = registered()
    assert set(modules) >= TILL_MODULES
    assert all(list(modules[module]) for module in TILL_MODULES)


def test_every_placeholder_is_a_field_of_the_statements_params() -> None:
    missing = {
        f"{module}:{statement.name}": sorted(names)
        for module, statements in registered().items()
        for statement in statements
        if (names := unbound(statement))
    }
    assert missing == {}


def test_every_field_is_a_placeholder_of_a_statement_that_takes_it() -> None:
    read: dict[type[Params], set[str]] = {}
    for statements in registered().values():
        for statement in statements:
            for params in statement.params:
                read.setdefault(params, set()).update(placeholders(statement.text))
    unread = {
        params.__qualname__: sorted(set(params.__struct_fields__) - names)
        for params, names in read.items()
        if set(params.__struct_fields__) - names
    }
    assert unread == {}


def test_a_changed_statement_or_a_stray_placeholder_is_found() -> None:
    """The checks above can fail: a statement of a real module changed by one character differs
    from its file, and a placeholder its struct lacks is named."""
    module = "loyalty_core.wallet.till_adjust"
    real = registered()[module]
    changed = Statements(module)
    for statement in real:
        changed(statement.name, statement.text.replace("FOR UPDATE OF w", "FOR SHARE OF w"), *statement.params)
    assert list(differences({module: changed})) == ["packages/loyalty_core/src/loyalty_core/wallet/till_adjust.sql"]
    first = next(iter(real))
    assert unbound(Statement(first.name, first.text + " AND %(branch_key)s", first.params)) == {"branch_key"}


def test_a_module_cannot_name_two_statements_alike() -> None:
    statements = Statements("tests.core.nowhere")
    statements("one", "SELECT 1")
    with pytest.raises(ValueError, match="two statements 'one'"):
        statements("one", "SELECT 2")


def test_the_file_holds_each_statement_under_its_name_and_struct() -> None:
    class Answer(Params, frozen=True):
        answer: int

    statements = Statements("tests.core.nowhere")
    statements("first", "\nSELECT %(answer)s\n", Answer)
    statements("second", "SELECT 2", Answer)
    assert render(statements) == (
        "-- name: first\n-- params: Answer\nSELECT %(answer)s;\n\n-- name: second\n-- params: Answer\nSELECT 2;\n"
    )
