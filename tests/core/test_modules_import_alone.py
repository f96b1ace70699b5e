"""The till's write paths import on their own, as a tool or a job that needs only one of them
does: an import cycle shows only when a module of it is the first one imported."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    "module",
    [
        "loyalty_core.wallet.till_adjust",
        "loyalty_core.wallet.services",
        "loyalty_core.earning.till_purchase",
        "loyalty_core.earning.till_return",
        "loyalty_core.redemptions.till_redeem",
        "loyalty_core.redemptions.till_verify",
    ],
)
def test_a_till_path_imports_alone(module: str) -> None:
    done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, check=False)
    assert (done.returncode, done.stderr) == (0, "")
