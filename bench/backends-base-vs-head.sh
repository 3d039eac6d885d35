#!/usr/bin/env bash
# The controller's in-process backends (`cargo bench -p tandem-controller --bench backends`) at a
# base commit and at HEAD, in one run on one machine: the base's bench is built in a temporary
# git worktree with its own target folder (bench/out/base-target), both are built before either
# runs, then they run REPS times alternately with the same criterion flags. Prints every group's
# throughput, criterion's [low estimate high], per run and side. Groups that exist on one side
# only (a new backend or sink) are printed for that side.
#
#   bench/backends-base-vs-head.sh BASE [REPS (default 1)] [FILTER (a criterion filter, default all)]
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: bench/backends-base-vs-head.sh BASE [REPS] [FILTER]}
reps=${2:-1}
filter=${3:-}
base_rev=$(git rev-parse --short "$base^{commit}")
head_rev=$(git rev-parse --short HEAD)
work=$(mktemp -d /tmp/tandem-backends-base-XXXXXX)
cleanup() {
  git worktree remove --force "$work/tree" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p bench/out/base-target
flags=(--warm-up-time 1 --measurement-time 3 --sample-size 10)

echo "== building the benches of HEAD ($head_rev) and $base_rev" >&2
cargo bench -q -p tandem-controller --bench backends --no-run
git worktree add -q --detach "$work/tree" "$base_rev"
(cd "$work/tree" && CARGO_TARGET_DIR="$OLDPWD/bench/out/base-target" cargo bench -q -p tandem-controller --bench backends --no-run)

# run SIDE DIR TARGET: one criterion run, its throughput lines as "SIDE GROUP/ID [low mid high]".
run() {
  local side=$1 dir=$2 target=$3
  (cd "$dir" && CARGO_TARGET_DIR="$target" cargo bench -q -p tandem-controller --bench backends -- \
    "${flags[@]}" --noplot ${filter:+"$filter"} 2>/dev/null) |
    awk -v side="$side" '
      /^[A-Za-z0-9-]+\/[A-Za-z0-9-]+/ { name = $1 }
      /thrpt:/ && /elem\/s/ { sub(/.*thrpt: */, ""); print side, name, $0 }'
}

for r in $(seq "$reps"); do
  echo "== run $r of $reps" >&2
  run "base:$base_rev" "$work/tree" "$PWD/bench/out/base-target"
  run "head:$head_rev" "$PWD" "$PWD/target"
done
