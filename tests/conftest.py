"""Shared by every package's tests. Imports nothing beyond pytest (and Hypothesis where the
environment has it): ``tests/wallet_pass`` runs in an environment that holds neither SQLAlchemy nor
the other packages."""

import sys

import pytest

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # an environment without property tests
    pass
else:
    # A loaded 2-core machine (other lanes, other people's work) stretches any one example and the
    # generation of its input many times over: the properties check values, not speed, so neither
    # a deadline nor the too_slow health check may fail them there. The number of examples and
    # every other health check stay as each test sets them.
    settings.register_profile("loaded-machine", deadline=None, suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("loaded-machine")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Drop the databases this run created and its Redis keys (tests/support/database.py), if it
    made any: a run leaves nothing behind on the servers it shares, and touches nothing it did not
    make. It never raises: a failure there is a warning line, and the run's failure list still shows."""
    database = sys.modules.get("tests.support.database")
    if database is not None:
        database.finish_session(lambda line: print(f"\n{line}", file=sys.stderr))
