#!/usr/bin/env bash
# The controller's throughput at a base commit against HEAD under `tandem ofbench`, in one run
# on one machine (issue 19: porting the L2 switch to the session and app API v2 must keep
# ofbench throughput within 5%). Builds both release binaries (the base in a temporary git
# worktree with its own target folder, kept in bench/out/base-target), then REPS times,
# alternating, starts each controller (cpu backend) and drives it with HEAD's ofbench (the same
# load generator for both: 16 switches, throughput mode), and prints each run's RESULT average
# and the median ratio HEAD / base. Every process it starts is stopped by PID on exit.
#
#   bench/ofbench-base-vs-head.sh BASE [REPS (default 5)] [LOOPS (default 6: 1 warm-up + 5)] [OF 1.0|1.3]
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: bench/ofbench-base-vs-head.sh BASE [REPS] [LOOPS] [OF]}
reps=${2:-5}
loops=${3:-6}
of=${4:-1.0}
base_rev=$(git rev-parse --short "$base^{commit}")
head_rev=$(git rev-parse --short HEAD)
work=$(mktemp -d /tmp/tandem-ofbase-XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  git worktree remove --force "$work/tree" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p bench/out/base-target

echo "== building HEAD ($head_rev) and $base_rev (release)" >&2
cargo build --release -q -p tandem-cli
cp target/release/tandem "$work/tandem-head"
git worktree add -q --detach "$work/tree" "$base_rev"
(cd "$work/tree" && CARGO_TARGET_DIR="$OLDPWD/bench/out/base-target" cargo build --release -q -p tandem-cli)
cp bench/out/base-target/release/tandem "$work/tandem-base"

wait_port() { # port
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing listens on port $1" >&2
  return 1
}

run() { # label binary port
  "$2" controller --listen "127.0.0.1:$3" --backend cpu --log warn & PIDS+=($!)
  wait_port "$3"
  local r
  r=$("$work/tandem-head" ofbench --controller "127.0.0.1:$3" --switches 16 --loops "$loops" --throughput --of "$of" |
    awk -F'= ' '/^RESULT/ { split($2, v, "/"); print v[3] }')
  kill "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null || true
  echo "$1 $r"
}
: > "$work/rows"
port=17653
for i in $(seq 1 "$reps"); do
  run base "$work/tandem-base" $((port++)) | tee -a "$work/rows"
  run head "$work/tandem-head" $((port++)) | tee -a "$work/rows"
done
python3 - "$work/rows" "$base_rev" "$head_rev" "$loops" "$of" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 2]
base, head, loops, of = sys.argv[2:6]
b = [float(r[1]) for r in rows if r[0] == "base"]
h = [float(r[1]) for r in rows if r[0] == "head"]
print()
print(f"ofbench throughput, 16 switches, {loops} loops of 1 s (first left out), OpenFlow {of}, cpu backend")
print(f"| commit | runs (responses/s) | median |")
print(f"|---|---|---|")
print(f"| {base} (base) | {', '.join(f'{x:,.0f}' for x in b)} | {statistics.median(b):,.0f} |")
print(f"| {head} (HEAD) | {', '.join(f'{x:,.0f}' for x in h)} | {statistics.median(h):,.0f} |")
print(f"\nHEAD / base (medians): {statistics.median(h) / statistics.median(b):.3f}")
PY
