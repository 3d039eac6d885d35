#!/usr/bin/env bash
# Runs the ns-3 validation programs and stores one JSON object per run in bench/ns3/out/.
#
#   bench/ns3/run.sh            full runs: bulk 10 s, incast 100 rounds, dctcp & newreno 10 s
#   bench/ns3/run.sh --quick    CI runs:   bulk 1 s,  incast 10 rounds,  dctcp & newreno 1 s
#
# Extra arguments after the mode are passed to every program (e.g. --min-rto=10ms).
# (Re)builds first if a binary is missing or older than its sources. Prints a one-line
# summary per run on stderr.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$here/build"
out="$here/out"

quick=0
if [ "${1:-}" = "--quick" ]; then
    quick=1
    shift
fi
extra=("$@")

for prog in bulk incast dctcp scenario; do
    bin="$build/$prog"
    if [ ! -x "$bin" ] || [ "$here/$prog.cc" -nt "$bin" ] || [ "$here/common.h" -nt "$bin" ]; then
        "$here/build.sh"
        break
    fi
done
mkdir -p "$out"

if [ "$quick" -eq 1 ]; then
    suffix="-quick"
    bulk_args=(--duration=1s)
    incast_args=(--rounds=10)
    dctcp_args=(--duration=1s)
else
    suffix=""
    bulk_args=(--duration=10s)
    incast_args=(--rounds=100)
    dctcp_args=(--duration=10s)
fi

# run NAME BINARY ARGS...: stores stdout (exactly one JSON line) in out/NAME.json.
run() {
    local name="$1" bin="$2"
    shift 2
    local file="$out/$name$suffix.json"
    echo "run.sh: $bin $*" >&2
    "$build/$bin" "$@" >"$file.tmp"
    mv "$file.tmp" "$file"
    python3 - "$file" <<'PY' >&2 || true
import json, sys
d = json.load(open(sys.argv[1]))
keys = ["goodput_bps", "drops", "marks", "retransmits", "timeouts", "queue_mean_pkts",
        "queue_p99_pkts", "wall_s", "events"]
s = {k: d[k] for k in keys if k in d}
if "round_completion" in d:
    s["rct_mean_s"] = d["round_completion"]["mean_s"]
    s["rct_p99_s"] = d["round_completion"]["p99_s"]
    s["fct_p99_s"] = d["flow_completion"]["p99_s"]
print("  ->", sys.argv[1], json.dumps(s))
PY
}

run bulk bulk "${bulk_args[@]}" "${extra[@]}"
run incast incast "${incast_args[@]}" "${extra[@]}"
run dctcp dctcp --cc=dctcp "${dctcp_args[@]}" "${extra[@]}"
run dctcp-newreno dctcp --cc=newreno "${dctcp_args[@]}" "${extra[@]}"
echo "run.sh: results in $out" >&2
