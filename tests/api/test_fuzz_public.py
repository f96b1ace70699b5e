"""Schema fuzzing of the public document (issue 12): schemathesis against `loyalty serve` on the
real PostgreSQL, every operation, positive and negative data, a fixed seed and few examples per
operation. No answer may be a 5xx and every answer must match the document (status, headers,
content type, body)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

EXAMPLES_PER_OPERATION = 4
JSON = "application/json"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _call(url: str, body: dict[str, Any] | None = None, headers: dict[str, str] | None = None) -> dict[str, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json", **(headers or {})})
    with urllib.request.urlopen(request, timeout=10) as r:
        parsed: dict[str, Any] = json.loads(r.read())
        return parsed


@pytest.fixture(scope="module")
def served(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """`loyalty serve` on a free port, and a vendor token on a plan without a rate ceiling."""
    port = _free_port()
    home = tmp_path_factory.mktemp("fuzz-home")
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "LOYALTY_PORT": str(port),
        "LOYALTY_HOME": str(home),
        "LOYALTY_ANON_RATE_PER_MINUTE": "1000000",
        "LOYALTY_MAX_RATE_PER_MINUTE": "1000000",
    }
    env.pop("REDIS_URL", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "loyalty_api.cli", "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(base)
        admin = {"Authorization": f"Bearer {(Path(home) / 'admin-token').read_text().strip()}"}
        plan = _call(f"{base}/admin/v1/plans", {"name": "fuzz plan"}, admin)["data"]
        vendor = _call(f"{base}/admin/v1/vendors", {"name": "fuzz vendor", "plan_id": plan["id"]}, admin)["data"]
        made = _call(f"{base}/admin/v1/vendors/{vendor['id']}/clients", {"name": "till"}, admin)["data"]
        token = _call(
            f"{base}/oauth/token",
            {
                "grant_type": "client_credentials",
                "client_id": made["client_id"],
                "client_secret": made["client_secret"],
            },
        )["access_token"]
        yield base, {"Authorization": f"Bearer {token}"}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def _wait_until_up(base: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{base}/health/live", timeout=2).close()
            return
        except (OSError, urllib.error.HTTPError):
            time.sleep(0.2)
    raise AssertionError("loyalty serve did not answer within 30 s")


@pytest.fixture(scope="module")
def public_document(served: tuple[str, dict[str, str]]) -> Any:
    base, _ = served
    schema = schemathesis.openapi.from_url(f"{base}/api/v1/openapi.json")
    schema.config.update(base_url=base)
    # JSON text the service reads is UTF-8: strings with lone surrogates are refused by design
    # (Validation details 5), which a schema cannot say
    schema.config.generation.update(codec="utf-8")
    return schema


def _fuzz(operation: Any, mode: GenerationMode, vendor: dict[str, str]) -> str | None:
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
        # the schema allows, as the spec says they do; and a JSON body that is not an object reads
        # as an empty one. What is asserted: no 5xx, and every answer as the document says.
        case.call_and_validate(headers=vendor, excluded_checks=[positive_data_acceptance, negative_data_rejection])

    try:
        run()
    except KeyboardInterrupt:
        raise
    except Unsatisfiable:
        return None  # no negative data exists for an operation taking no input
    except BaseException as exc:  # schemathesis' failure group included: every failure is reported
        return f"{operation.label} [{mode.value}]: {str(exc)[:3000]}"
    return None


def test_public_operations_answer_as_documented(public_document: Any, served: tuple[str, dict[str, str]]) -> None:
    """Issue 12: every operation of the public document, positive and negative data, with a vendor
    token: zero 5xx and every answer valid against the document."""
    _, vendor = served
    operations = [result.ok() for result in public_document.get_all_operations()]
    assert len(operations) > 20
    failures = [
        failure
        for operation in operations
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
        if (failure := _fuzz(operation, mode, vendor)) is not None
    ]
    Path(os.environ.get("LOYALTY_FUZZ_REPORT", os.devnull)).write_text("\n\n".join(failures))
    assert failures == [], "\n\n".join(failures)


STATEFUL_SCENARIOS = 12
STATEFUL_STEPS = 6


def test_public_api_statefully(public_document: Any, served: tuple[str, dict[str, str]]) -> None:
    """Issue 12: stateful fuzzing over the document's links (a registered customer's wallet, ledger,
    transactions and adjustment; a redemption's read and verify; a product's read), a fixed seed
    and a bounded number of scenarios: zero 5xx and every answer valid against the document."""
    _, vendor = served
    machine = public_document.as_state_machine()

    class WithToken(machine):  # type: ignore[misc, valid-type]
        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"headers": vendor}

        def validate_response(self, response: Any, case: Any, additional_checks: Any = None, **kwargs: Any) -> None:
            # as in the stateless run: business rules may refuse data the schema allows
            case.validate_response(
                response, excluded_checks=[positive_data_acceptance, negative_data_rejection], transport_kwargs=kwargs
            )

    WithToken.run(
        settings=settings(
            max_examples=STATEFUL_SCENARIOS,
            stateful_step_count=STATEFUL_STEPS,
            derandomize=True,
            # the server's state is not the fuzzer's to replay: no shrinking, a failure is reported as found
            phases=[Phase.generate],
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
    )
