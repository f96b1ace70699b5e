"""Every property test of the core suite holds on a loaded 2-core machine: no deadline and no
too_slow health check can fail it there (the profile of tests/conftest.py), and none runs fewer
examples than it asks for. Each module that uses Hypothesis is imported and its tests read."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings

SUITE = Path(__file__).resolve().parent
ROOT = SUITE.parents[1]


def property_tests() -> list[tuple[str, Any]]:
    found = []
    for path in sorted(SUITE.rglob("test_*.py")):
        if "hypothesis" not in path.read_text() or path == Path(__file__).resolve():
            continue
        module = importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
        found += [
            (f"{module.__name__}.{name}", test)
            for name, test in vars(module).items()
            if name.startswith("test_") and getattr(test, "is_hypothesis_test", False)
        ]
    return found


def test_the_profile_sets_no_deadline_and_tolerates_slow_generation() -> None:
    assert settings().deadline is None
    assert HealthCheck.too_slow in settings().suppress_health_check
    # what the tests check is not weakened: the other health checks stay on
    assert HealthCheck.filter_too_much not in settings().suppress_health_check
    assert settings().max_examples == settings.get_profile("default").max_examples


def test_every_property_test_keeps_the_loaded_machine_profile() -> None:
    tests = property_tests()
    assert len(tests) >= 7  # the wallet, merge, redemption, return, rule and catalogue properties
    for name, test in tests:
        # a test's own @settings starts from the profile; only what it names differs
        own: settings = getattr(test, "_hypothesis_internal_use_settings", settings())
        assert own.deadline is None, name
        assert HealthCheck.too_slow in own.suppress_health_check, name
