# The loyalty back end's everyday commands. `uv run just --list` shows them.
set shell := ["bash", "-euo", "pipefail", "-c"]

# every package and tool, from the lock file
install:
    uv sync --all-packages --frozen

# serve the API (embedded PostgreSQL unless DATABASE_URL is set)
serve *ARGS:
    uv run --frozen loyalty serve {{ARGS}}

# run the job worker as its own process (LOYALTY_WORKER=external)
worker:
    uv run --frozen loyalty worker

# apply database migrations
db-upgrade:
    uv run --frozen loyalty db upgrade

# autogenerate a migration from the models
db-revision MESSAGE:
    uv run --frozen loyalty db revision -m "{{MESSAGE}}"

# every package's tests alone in its own environment, then the composed service
# (VIRTUAL_ENV is dropped for the package environments: uv would warn that it names another one)
test *ARGS: (test-core ARGS) (test-wallet-pass ARGS) (test-http ARGS) (test-api ARGS)

# loyalty_core alone: no litestar, saq or redis installed
test-core *ARGS:
    @echo "== loyalty_core (alone)"
    env -u VIRTUAL_ENV UV_PROJECT_ENVIRONMENT=.venvs/core uv run --frozen --exact --package loyalty-core pytest tests/core {{ARGS}}

# loyalty_wallet_pass alone: neither of the other packages installed
test-wallet-pass *ARGS:
    @echo "== loyalty_wallet_pass (alone)"
    env -u VIRTUAL_ENV UV_PROJECT_ENVIRONMENT=.venvs/wallet-pass uv run --frozen --exact --package loyalty-wallet-pass pytest tests/wallet_pass {{ARGS}}

# loyalty_http with loyalty_core, no service
test-http *ARGS:
    @echo "== loyalty_http (with loyalty_core)"
    env -u VIRTUAL_ENV UV_PROJECT_ENVIRONMENT=.venvs/http uv run --frozen --exact --package loyalty-http pytest tests/http {{ARGS}}

# the composed service, end to end
test-api *ARGS:
    @echo "== loyalty-api (the composed service)"
    uv run --frozen --exact --all-packages pytest tests/api {{ARGS}}

# the multi-process fault and load tests on deploy/Procfile (FAULT-1 to FAULT-4, RATE-1; docs/deployment.md):
# real PostgreSQL, a redis-server of their own; LOYALTY_FAULT_SECONDS bounds each fault (CI sets it low)
faults *ARGS:
    @echo "== the deployment of deploy/Procfile under faults"
    uv run --frozen --exact --all-packages pytest tests/deployment -p no:cacheprovider {{ARGS}}

# regenerate docs/openapi-public.json and docs/openapi-admin.json from the routes
openapi:
    uv run --frozen python -m loyalty_http.openapi.export docs

# ruff (lint + format) and the import-direction contracts
lint:
    uv run --frozen ruff check .
    uv run --frozen ruff format --check .
    uv run --frozen lint-imports

# mypy --strict on every package (the configuration is in pyproject.toml)
typecheck:
    uv run --frozen mypy packages/loyalty_core/src packages/loyalty_http/src packages/loyalty_wallet_pass/src services/api/src

# benchmarks under bench/, results recorded in bench/results/
bench *ARGS:
    uv run --frozen python -m bench {{ARGS}}
