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

# migrate the database (DATABASE_URL, or the embedded one) to the newest revision
db-upgrade:
    uv run --frozen loyalty db upgrade

# autogenerate a migration from the models against DATABASE_URL (a scratch database; developers only)
db-revision MESSAGE:
    uv run --frozen python -m loyalty_api.revision -m "{{MESSAGE}}"

# The suites wait on servers and browsers much of the time, so four lanes at once use the cores a
# serial run leaves idle; each line is prefixed by its lane, and the run fails when any suite fails.
# The composed service's suite is the longest, so it is two lanes: its files that start processes of
# their own and the rest (tests/api/test_lanes.py checks that each file runs in exactly one).

# tests/api's files that start processes of their own (`loyalty serve`, `uv sync`, the README's shell
# blocks): about half of that suite's time; `test-api-in-process` runs every other file of it
api_procs := "tests/api/test_fuzz.py tests/api/test_readme.py tests/api/test_start_failures.py tests/api/test_logs.py tests/api/test_lean_install.py tests/api/test_serve.py tests/api/test_serve_limits.py tests/api/test_process_lifetimes.py"

# every suite, in four lanes at once: the packages alone, the composed service (in two), the portal
test *ARGS:
    #!/usr/bin/env bash
    set -uo pipefail
    lane() {
        local name=$1 rc=0 recipe start=$SECONDS; shift
        for recipe in "$@"; do
            {{just_executable()}} --justfile {{justfile()}} "$recipe" {{ARGS}} 2>&1 | sed -u "s/^/[$name] /"
            # pytest's 5: options such as -k selected none of this suite's tests, which is no failure
            case "${PIPESTATUS[0]}" in 0 | 5) ;; *) rc=1 ;; esac
        done
        local took=$((SECONDS - start))
        echo "[$name] lane finished: $([ $rc -eq 0 ] && echo passed || echo FAILED) in $((took / 60))m$((took % 60))s"
        return $rc
    }
    lane packages test-core test-wallet-pass test-client test-http & packages=$!
    lane service test-api-in-process & service=$!
    lane processes test-api-procs & processes=$!
    lane portal test-portal & portal=$!
    status=0
    for lane in $packages $service $processes $portal; do wait "$lane" || status=1; done
    exit $status

# every suite one after another: each package alone in its own environment, then the composed service
test-serial *ARGS: (test-core ARGS) (test-wallet-pass ARGS) (test-http ARGS) (test-api ARGS) (test-client ARGS) (test-portal ARGS)

# the package suites run in environments of their own under .venvs/ (VIRTUAL_ENV is dropped: uv
# would warn that it names another environment)

# loyalty_core's tests alone in .venvs/core: no litestar, saq or redis installed
test-core *ARGS:
    @echo "== loyalty_core (alone)"
    env -u VIRTUAL_ENV UV_PROJECT_ENVIRONMENT=.venvs/core uv run --frozen --exact --package loyalty-core pytest tests/core {{ARGS}}

# loyalty_wallet_pass's tests alone in .venvs/wallet-pass: neither other package installed
test-wallet-pass *ARGS:
    @echo "== loyalty_wallet_pass (alone)"
    env -u VIRTUAL_ENV UV_PROJECT_ENVIRONMENT=.venvs/wallet-pass uv run --frozen --exact --package loyalty-wallet-pass pytest tests/wallet_pass {{ARGS}}

# loyalty_http's tests with loyalty_core only, in .venvs/http: no service
test-http *ARGS:
    @echo "== loyalty_http (with loyalty_core)"
    env -u VIRTUAL_ENV UV_PROJECT_ENVIRONMENT=.venvs/http uv run --frozen --exact --package loyalty-http pytest tests/http {{ARGS}}

# the composed service's tests in the workspace environment (the docs pages' tests drive /usr/bin/chromium)
test-api *ARGS:
    @echo "== loyalty-api (the composed service)"
    uv run --frozen --exact --all-packages pytest tests/api {{ARGS}}

# the composed service's tests but those of api_procs (`just test`'s service lane)
test-api-in-process *ARGS:
    @echo "== loyalty-api (the composed service, in process)"
    uv run --frozen --exact --all-packages pytest tests/api {{replace_regex(api_procs, '(\S+)', '--ignore=$1')}} {{ARGS}}

# the composed service's tests that start processes of their own, api_procs (`just test`'s processes lane)
test-api-procs *ARGS:
    @echo "== loyalty-api (the composed service, served by processes of the tests)"
    uv run --frozen --exact --all-packages pytest {{api_procs}} {{ARGS}}

# the stop tests of tests/api/test_process_lifetimes.py, each case 20 times (the regular suite runs each twice)
test-stops *ARGS:
    LOYALTY_STOP_REPEATS=20 uv run --frozen --exact --all-packages pytest tests/api/test_process_lifetimes.py {{ARGS}}

# loyalty_client's tests alone in .venvs/client: httpx and msgspec only, a scripted service (the
# contract suite against the real service is tests/api/client, run by test-api)
test-client *ARGS:
    @echo "== loyalty_client (alone)"
    env -u VIRTUAL_ENV UV_PROJECT_ENVIRONMENT=.venvs/client uv run --frozen --exact --package loyalty-client pytest tests/client {{ARGS}}

# the vendor portal through the composed service: HTTP-level checks and browser flows in Chromium
test-portal *ARGS:
    @echo "== loyalty_portal (through the composed service)"
    uv run --frozen --exact --all-packages pytest tests/portal {{ARGS}}

# deploy/Procfile's processes under faults (kills, Redis down, shared limits, fuzzing); LOYALTY_FAULT_SECONDS bounds each
faults *ARGS:
    @echo "== the deployment of deploy/Procfile under faults"
    uv run --frozen --exact --all-packages pytest tests/deployment -p no:cacheprovider {{ARGS}}

# rewrite the till's checked-in statements (loyalty_core's `till_*.sql` files) from what the code composes
till-sql:
    uv run --frozen python -m loyalty_core.till_sql

# regenerate docs/openapi-public.json and docs/openapi-admin.json from the routes
openapi:
    uv run --frozen python -m loyalty_http.openapi.export docs

# refresh docs/portal/ with Chromium's view of every portal page (runs tests/portal/test_screenshots.py)
portal-screenshots:
    LOYALTY_PORTAL_SCREENSHOTS=docs/portal uv run --frozen --exact --all-packages pytest tests/portal/test_screenshots.py -q

# refresh docs/screenshots/ with Chromium's view of the docs pages (runs their browser tests)
screenshots:
    LOYALTY_DOCS_SCREENSHOTS=docs/screenshots uv run --frozen --exact --all-packages pytest tests/api/docs -q

# regenerate loyalty_client's models, operations and error classes from docs/openapi-public.json
client:
    uv run --frozen python -m loyalty_client_gen

# ruff (lint + format) and the import-direction contracts
lint:
    uv run --frozen ruff check .
    uv run --frozen ruff format --check .
    uv run --frozen lint-imports

# mypy --strict on every package, the tests and the benchmarks (the configuration is in pyproject.toml)
typecheck:
    uv run --frozen mypy packages/loyalty_client/src loyalty_client_gen packages/loyalty_core/src packages/loyalty_http/src packages/loyalty_portal/src packages/loyalty_wallet_pass/src services/api/src tests bench

# run a benchmark of bench/ (e.g. `just bench mix`); results are recorded in bench/results/
bench *ARGS:
    uv run --frozen python -m bench {{ARGS}}
