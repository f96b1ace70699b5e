#!/bin/bash
# Build the archives that let the A/B benches run on a bare machine with no network (a lent device):
#   .dev/root.tar.xz  Debian's PostgreSQL 15 (with pg_stat_statements) and wrk, with the libraries
#                     they link (libc's family and LLVM left out: no JIT there)
#   .dev/site.tar.xz  uv.lock's dependencies for the device's CPython (wheels only, no dev tools)
#   .dev/tree.tar.xz  this commit's packages, services and bench (git archive HEAD)
# Usage, from the repository root: bash bench/bundle/make.sh [python-version, default 3.12]
# Needs: postgresql-15 and wrk installed here, uv, an interpreter of that version (PYTHON, else uv python find),
# and .dev/ ignored (echo /.dev/ >> .git/info/exclude). Then carry .dev and run bench/bundle/run.sh.
set -euo pipefail
version=${1:-3.12}
out=.dev; work=$(mktemp -d); mkdir -p "$out"
echo "bundle: PostgreSQL and wrk"
root=$work/root; mkdir -p "$root/usr/lib/postgresql" "$root/usr/share/postgresql" "$root/lib" "$root/usr/bin"
cp -a /usr/lib/postgresql/15 "$root/usr/lib/postgresql/"; cp -a /usr/share/postgresql/15 "$root/usr/share/postgresql/"
cp /usr/bin/wrk "$root/usr/bin/"
rm -rf "$root"/usr/lib/postgresql/15/lib/bitcode "$root"/usr/lib/postgresql/15/lib/llvmjit*.so
for lib in $(ldd "$root"/usr/lib/postgresql/15/bin/* "$root"/usr/lib/postgresql/15/lib/*.so /usr/bin/wrk 2>/dev/null | awk '/=>/{print $3}' | sort -u); do
  case $(basename "$lib") in libc.so*|libm.so*|libpthread*|libresolv*|libgcc_s*|libstdc++*|libdl*|librt*) ;; *) cp -L "$lib" "$root/lib/";; esac
done
tar -C "$root" -cJf "$out/root.tar.xz" .
echo "bundle: dependencies for CPython $version"
python=${PYTHON:-$(uv python find "$version")}
uv export --frozen --all-packages --all-groups --no-hashes --no-emit-workspace | grep -v '^#\|^ ' \
  | grep -Ev '^(mypy|ruff|playwright|schemathesis|hypothesis|import-linter|grimp|pgserver|rust-just|jsonschema-rs|ast-serialize|librt)' >"$work/requirements.txt"
uv pip install -q --no-deps --target "$work/site" --python "$python" --python-platform x86_64-manylinux_2_28 \
  --only-binary :all: -r "$work/requirements.txt"
tar -C "$work/site" -cJf "$out/site.tar.xz" .
echo "bundle: the tree at $(git rev-parse --short HEAD)"
git archive --format=tar HEAD packages services bench | xz -9 >"$out/tree.tar.xz"
rm -rf "$work"
ls -la "$out"
