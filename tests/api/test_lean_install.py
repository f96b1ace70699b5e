"""The production install (docs/deployment.md, deploy/systemd): `uv sync --frozen --no-dev` gives an
environment with the service's runtime packages only, none of the development tools, and
`loyalty serve` from it answers."""

from __future__ import annotations

import os
import shutil
import subprocess
import urllib.request
from pathlib import Path

import pytest

from tests.support.served import Served

ROOT = Path(__file__).resolve().parents[2]
DEVELOPMENT_ONLY = ("pytest", "mypy", "ruff", "schemathesis", "hypothesis", "playwright", "honcho", "importlinter")


@pytest.fixture(scope="module")
def lean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    uv = shutil.which("uv")
    assert uv is not None, "uv runs the test suites, so it is on PATH"
    venv = Path(tmp_path_factory.mktemp("lean")) / "venv"
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["UV_PROJECT_ENVIRONMENT"] = str(venv)
    # the packages are in uv's cache from the workspace's own sync: nothing is downloaded
    done = subprocess.run(
        [uv, "sync", "--frozen", "--no-dev", "--offline"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return venv


def test_the_runtime_environment_holds_no_development_tool(lean: Path) -> None:
    probe = "import importlib.util as u, sys; print(' '.join(n for n in sys.argv[1:] if u.find_spec(n)))"
    found = subprocess.run(
        [str(lean / "bin" / "python"), "-c", probe, *DEVELOPMENT_ONLY, "loyalty_api", "granian", "swagger_ui"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout.split() == ["loyalty_api", "granian", "swagger_ui"]


def test_loyalty_help_runs_from_it(lean: Path) -> None:
    shown = subprocess.run([str(lean / "bin" / "loyalty"), "--help"], capture_output=True, text=True, check=False)
    assert shown.returncode == 0, shown.stderr
    assert "serve" in shown.stdout
    assert "worker" in shown.stdout


def test_loyalty_serve_answers_from_it(lean: Path, database_url: str, tmp_path: Path) -> None:
    with Served(database_url, tmp_path, python=str(lean / "bin" / "python")) as served:
        with urllib.request.urlopen(f"{served.url}/health/ready", timeout=5) as ready:
            assert ready.status == 200
        with urllib.request.urlopen(f"{served.url}/api/v1/docs/swagger-ui-bundle.js", timeout=5) as script:
            assert script.status == 200
