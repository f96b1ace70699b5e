"""The stateful fuzzing's scenarios hold against a service whose state outlives each of them: any
number of scenarios runs (``LOYALTY_FUZZ_SCENARIOS`` 20 or 50, as the README suggests for a deeper
run), the same on every run, and a failure still fails the run (L10, FAULT-4).

The machine here stands in for the service: what a scenario creates stays (as the service's rows
do), and every other create of a value meets the row the one before made and gives nothing to
link to (as a unique field's 409 does)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.errors import FlakyStrategyDefinition
from hypothesis.stateful import Bundle, RuleBasedStateMachine, multiple, rule, run_state_machine_as_test

from tests.support.fuzzing import run_scenarios


def remembering_machine(
    server: dict[int, int], steps: list[list[str]], failed: list[BaseException] | None = None, broken: int = -1
) -> type[RuleBasedStateMachine]:
    """``broken``: reading that value fails (into ``failed``, as the fuzzing's checks record a 5xx)."""

    class Remembering(RuleBasedStateMachine):
        made = Bundle("made")

        def __init__(self) -> None:
            super().__init__()
            steps.append([])

        @rule(target=made, value=st.integers(0, 3))
        def create(self, value: int) -> Any:
            steps[-1].append(f"create {value}")
            server[value] = server.get(value, 0) + 1
            return value if server[value] % 2 else multiple()

        @rule(value=made)
        def read(self, value: int) -> None:
            steps[-1].append(f"read {value}")
            if value == broken:
                failure = AssertionError(f"reading {value} failed")
                (failed if failed is not None else []).append(failure)
                raise failure

    return Remembering


def test_one_hypothesis_run_of_fifty_scenarios_stops_as_inconsistent_generation() -> None:
    """What the fuzzing met with LOYALTY_FUZZ_SCENARIOS=50: one derandomized run of all scenarios
    stops when a scenario meets what an earlier one left."""
    steps: list[list[str]] = []
    one_run = settings(
        max_examples=50,
        stateful_step_count=6,
        derandomize=True,
        phases=[Phase.generate],
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    with pytest.raises(FlakyStrategyDefinition):
        run_state_machine_as_test(remembering_machine({}, steps), settings=one_run)
    assert len(steps) < 50


@pytest.mark.parametrize("count", [20, 50])
def test_every_scenario_runs_against_state_that_outlives_each(count: int) -> None:
    steps: list[list[str]] = []
    ran = run_scenarios(remembering_machine({}, steps), count, [])
    # Hypothesis also starts machines for examples it drops before a step: those are not scenarios
    stepped = [scenario for scenario in steps if scenario]
    assert ran == len(stepped)
    assert count <= ran <= count + 2
    # each steps past its start but those cut short where Hypothesis stopped a run
    assert sum(len(scenario) >= 2 for scenario in stepped) >= count * 3 // 4
    assert len({tuple(scenario) for scenario in stepped}) > count // 3  # they differ from one another
    again: list[list[str]] = []
    run_scenarios(remembering_machine({}, again), count, [])
    assert again == steps  # fixed seeds: the same scenarios on every run


def test_a_failing_scenario_fails_the_run_whatever_hypothesis_makes_of_it() -> None:
    """Hypothesis runs a failing scenario again, meets other answers and reports inconsistent
    generation rather than the failure: the failure the machine recorded is what the run raises."""
    failed: list[BaseException] = []
    with pytest.raises(AssertionError, match="reading 1 failed"):
        run_scenarios(remembering_machine({}, [], failed, broken=1), 50, failed)
