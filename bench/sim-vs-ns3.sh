#!/usr/bin/env bash
# Runs the whole validation suite (scenarios/validation/) in ns-3 3.37 and in Tandem, in the
# same run, and prints the comparison with the declared tolerances.
#
#   bench/sim-vs-ns3.sh            full scenarios
#   bench/sim-vs-ns3.sh --quick    the short versions CI runs
#   bench/sim-vs-ns3.sh --store    also copy the ns-3 results into crates/sim/data/ns3/ (the
#                                  references `tandem reproduce sim-validation` compares with)
#   bench/sim-vs-ns3.sh NAME...    only these scenarios
#
# Each scenario is exported with `tandem sim export-ns3` (same topology, queues, TCP settings
# and flow list) and run by bench/ns3/scenario.cc. Needs g++ and Debian's libns3-dev.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=""; store=""; names=()
for a in "$@"; do
  case "$a" in
    --quick) quick="--quick" ;;
    --store) store=1 ;;
    *) names+=("$a") ;;
  esac
done
suffix=""; [ -n "$quick" ] && suffix="-quick"
bench/ns3/build.sh >/dev/null
cargo build --release -q -p tandem-cli -p tandem-sim --example ns3_compare
t="${CARGO_TARGET_DIR:-target}/release"
[ ${#names[@]} -gt 0 ] || mapfile -t names < <("$t/examples/ns3_compare" --list)
out=bench/out/validation; mkdir -p "$out"
for n in "${names[@]}"; do
  sets=()
  if [ -n "$quick" ]; then
    d=$(python3 -c "import tomllib,sys; t=tomllib.load(open('scenarios/validation/tolerances.toml','rb')); print([s['quick'] for s in t['scenario'] if s['name']==sys.argv[1]][0])" "$n")
    sets=(--set "duration=$d")
  fi
  "$t/tandem" sim export-ns3 "scenarios/validation/$n.toml" "${sets[@]}" --out "$out/$n$suffix.spec"
  echo "== $n: ns-3" >&2
  bench/ns3/build/scenario "$out/$n$suffix.spec" > "$out/ns3-$n$suffix.json"
  echo "== $n: tandem" >&2
  "$t/examples/ns3_compare" "$n" $quick > "$out/tandem-$n$suffix.json"
  if [ -n "$store" ]; then
    cp "$out/ns3-$n$suffix.json" "crates/sim/data/ns3/$n$suffix.json"
    python3 bench/ns3/trim-result.py "crates/sim/data/ns3/$n$suffix.json"
  fi
done
"$t/examples/ns3_compare" --compare "$out" $quick "${names[@]}"
