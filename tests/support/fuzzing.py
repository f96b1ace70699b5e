"""Schema fuzzing with schemathesis, as the fuzz tests run it against a served app: a document
read from its URL, every operation with positive and negative data (fixed seed, few examples, no
shrinking), and stateful runs over the document's links. Nothing may answer a 5xx and every answer
must match the document; business rules may refuse data the schema allows."""

from __future__ import annotations

import itertools
import os
import re
from typing import Any

import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis.errors import FlakyStrategyDefinition, Unsatisfiable
from hypothesis.stateful import RuleBasedStateMachine, get_state_machine_test
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

EXAMPLES_PER_OPERATION = int(os.environ.get("LOYALTY_FUZZ_EXAMPLES", "4"))
"""Few in the everyday suite (it stays fast); a deeper run sets LOYALTY_FUZZ_EXAMPLES."""
STATEFUL_SCENARIOS = int(os.environ.get("LOYALTY_FUZZ_SCENARIOS", "12"))
STATEFUL_STEPS = 6
JSON = "application/json"


def prepared(schema: Any, base: str) -> Any:
    schema.config.update(base_url=base)
    # JSON text the service reads is UTF-8: strings with lone surrogates are refused by design
    # (INPUT-9), which a schema cannot say
    schema.config.generation.update(codec="utf-8")
    return schema


def document(base: str, path: str = "/api/v1/openapi.json") -> Any:
    return prepared(schemathesis.openapi.from_url(f"{base}{path}"), base)


def fuzz(operation: Any, mode: GenerationMode, headers: dict[str, str]) -> str | None:
    """The first failure of ``operation`` in ``mode``, or None."""

    # forms carry text only: null, numbers and nested values have no form spelling the document
    # could give, so the fuzzer sends JSON bodies (form reading has its own tests)
    strategy = operation.as_strategy(generation_mode=mode).filter(lambda c: c.media_type in (None, JSON))

    @given(case=strategy)
    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate],
    )
    def run(case: Any) -> None:
        # business rules (a birth date in the future, a card that does not exist) answer 422 to data
        # the schema allows, as the rule book says they do; and a JSON body that is not an object reads
        # as an empty one. What is asserted: no 5xx, and every answer as the document says.
        case.call_and_validate(headers=headers, excluded_checks=[positive_data_acceptance, negative_data_rejection])

    try:
        run()
    except KeyboardInterrupt:
        raise
    except Unsatisfiable:
        return None  # no negative data exists for an operation taking no input
    except BaseException as exc:  # schemathesis' failure group included: every failure is reported
        return f"{operation.label} [{mode.value}]: {str(exc)[:3000]}"
    return None


def failures(schema: Any, headers: dict[str, str]) -> tuple[int, list[str]]:
    """How many operations the document has, and every failure over them in both modes."""
    operations = [result.ok() for result in schema.get_all_operations()]
    found = [
        failure
        for operation in operations
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
        if (failure := fuzz(operation, mode, headers)) is not None
    ]
    return len(operations), found


UNIQUE_FIELDS = ("email", "external_id", "idempotency_key", "phone")
"""Body fields the service keeps unique per vendor: the same generated value a second time would
meet the first one's row and answer otherwise (409, or a 200 replay), so the state machine's
bundles would differ between two scenarios that drew the same values, which hypothesis refuses as
inconsistent generation. Each call gets its own value of the same shape instead."""
_calls = itertools.count(1)


def _unique(field: str, value: str, n: int) -> str:
    """``value`` with its tail replaced by the call's number, keeping its length and character kind
    (digits stay digits, an email's domain stays), so a value the rules accepted stays acceptable."""
    if field == "email" and value.count("@") == 1:
        local, domain = value.split("@")
        return f"{_unique('local', local, n)}@{domain}" if local else value
    if field == "phone":
        digits = re.search(r"\d+$", value)
        if digits is None:
            return value
        width = len(digits.group())
        return value[: digits.start()] + str(n % 10**width).zfill(width)
    tag = f"u{n}"
    return value[: max(0, len(value) - len(tag))] + tag if len(value) >= len(tag) else value


def _uniquified(body: Any) -> Any:
    if isinstance(body, dict):
        n = next(_calls)
        for field in UNIQUE_FIELDS:
            value = body.get(field)
            if isinstance(value, str) and value:
                body[field] = _unique(field, value, n)
    return body


def run_statefully(schema: Any, headers: dict[str, str]) -> None:
    """Bounded stateful runs over the document's links; a failure raises as found (the server's
    state is not the fuzzer's to replay, so there is no shrinking)."""
    machine = schema.as_state_machine()
    failed: list[BaseException] = []

    # schemathesis builds the state machine class at run time; mypy takes no variable as a base
    class WithToken(machine):  # type: ignore[misc, valid-type]
        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"headers": headers}

        def before_call(self, case: Any) -> None:
            case.body = _uniquified(case.body)

        def validate_response(self, response: Any, case: Any, additional_checks: Any = None, **kwargs: Any) -> None:
            try:
                case.validate_response(
                    response,
                    excluded_checks=[positive_data_acceptance, negative_data_rejection],
                    transport_kwargs=kwargs,
                )
            except BaseException as failure:
                failed.append(failure)
                raise

    run_scenarios(WithToken, STATEFUL_SCENARIOS, failed)


def run_scenarios(
    machine: type[RuleBasedStateMachine], count: int, failed: list[BaseException], steps: int = STATEFUL_STEPS
) -> int:
    """At least ``count`` scenarios of ``machine`` (answered: how many ran), from fixed seeds; the
    machine appends every failure it meets to ``failed``, and the first is raised.

    The service's state outlives a scenario, so a scenario that makes the same first choices as an
    earlier one of the same Hypothesis run can meet other answers (a bundle left empty where it was
    filled), and Hypothesis then stops the run as inconsistent generation
    (``FlakyStrategyDefinition``), the more surely the more scenarios (L10). That says nothing of
    the service: the run goes on as a fresh Hypothesis run from the next seed, whose first scenario
    cannot meet an earlier one, until ``count`` have run. A real failure can end in that verdict
    too (Hypothesis runs the failing scenario again, and the service answers otherwise), which is
    why failures are taken from ``failed``, not from what Hypothesis raises."""
    started = 0

    class Counted(machine):  # type: ignore[misc, valid-type]
        """Counts the scenarios that took a step: Hypothesis also starts machines for examples it
        drops before their first step. It checks the invariants at the start and after each step."""

        checks = 0

        def check_invariants(self, *args: Any, **kwargs: Any) -> None:
            nonlocal started
            self.checks += 1
            started += self.checks == 2
            super().check_invariants(*args, **kwargs)

    run = 0
    while started < count:
        before = started
        test = get_state_machine_test(
            Counted,
            settings=settings(
                max_examples=count - started,
                stateful_step_count=steps,
                phases=[Phase.generate],
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            ),
            _min_steps=min(2, steps),  # as schemathesis' own run: each scenario steps past its start
        )
        try:
            seed(run)(test)()
        except FlakyStrategyDefinition:
            if started == before and not failed:  # cannot happen on a fresh run; never loop without progress
                raise
        if failed:
            raise failed[0]
        run += 1
    return started
