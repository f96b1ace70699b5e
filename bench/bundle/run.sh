#!/bin/bash
# On the bare machine, from the repository root with .dev/ carried (see make.sh): unpack the archives,
# then run each argument as one benchmark, `python -m bench <argument>`, from the bundled tree.
# Reports go to $OUT (else /tmp/out); PYTHON names the interpreter (default python3). Example:
#   bash bench/bundle/run.sh "request-path --rounds 3 --duration 6 --warmup 2 --workers 2 --prime 3" \
#                            "earning --rounds 3 --duration 6 --warmup 2 --workers 2 --prime 3"
set -u
here=$(pwd)/.dev; root=/tmp/bundle-root; site=/tmp/bundle-site; tree=/tmp/bundle-tree
mkdir -p "$root" "$site" "$tree"
tar -C "$root" -xJf "$here/root.tar.xz" && tar -C "$site" -xJf "$here/site.tar.xz" && tar -C "$tree" -xJf "$here/tree.tar.xz" || exit 3
# PostgreSQL refuses to run as root: the bench's cluster runs as the postgres user
id postgres >/dev/null 2>&1 || useradd -r -M postgres || exit 4
chmod -R a+rX "$root"
export LD_LIBRARY_PATH=$root/lib PATH=$root/usr/bin:$PATH:/usr/sbin:/sbin PYTHONUNBUFFERED=1
export LOYALTY_BENCH_PG_BIN=$root/usr/lib/postgresql/15/bin LOYALTY_BENCH_OWN_POSTGRES=1
export PYTHONPATH=$site$(for p in "$tree"/packages/*/src "$tree"/services/api/src "$tree"; do printf ':%s' "$p"; done)
export BENCH_RESULTS_DIR=${OUT:-/tmp/out}
mkdir -p "$BENCH_RESULTS_DIR"
cd "$tree"
{ nproc; uptime; "${PYTHON:-python3}" -V; wrk -v 2>&1 | head -1; "$LOYALTY_BENCH_PG_BIN/postgres" -V; } 2>&1
for benchmark in "$@"; do
  echo "=== $(date -u +%T) $benchmark"
  # shellcheck disable=SC2086  # each argument is a benchmark and its options
  "${PYTHON:-python3}" -m bench $benchmark
done
echo "=== $(date -u +%T) done"; uptime
