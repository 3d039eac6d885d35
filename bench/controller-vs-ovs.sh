#!/usr/bin/env bash
# Controllers side by side under `tandem ofbench` (cbench-compatible), 16 switches, throughput and
# latency modes, all in one run on this machine:
#   - tandem controller, cpu backend and scalar backend;
#   - ovs-testcontroller (Debian openvswitch-testcontroller), OVS's C learning switch;
#   - a Python controller: bench/osken/l2_learning.py on os-ken (Ryu's maintained fork), when
#     OSKEN_PYTHON names a python that has it (`python3 -m venv V && V/bin/pip install os-ken`,
#     then OSKEN_PYTHON=V/bin/python); OpenFlow 1.0 only.
# Prints a markdown table with each controller's RESULT average and its ratio to
# ovs-testcontroller. Every process it starts is stopped by PID on exit.
#
# Usage: bench/controller-vs-ovs.sh [LOOPS (default 11: 1 warm-up + 10)] [SIZE 62|82|mixed] [OF 1.0|1.3]
set -euo pipefail
cd "$(dirname "$0")/.."
LOOPS=${1:-11}
SIZE=${2:-62}
OF=${3:-1.0}
cargo build --release -q -p tandem-cli
TANDEM=target/release/tandem
RUN=$(mktemp -d /tmp/tandem-ofbench-XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$RUN"
}
trap cleanup EXIT

wait_port() { # port
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing listens on port $1" >&2
  return 1
}

# avg responses/s of one ofbench run
bench() { # port mode
  "$TANDEM" ofbench --controller "127.0.0.1:$1" --switches 16 --loops "$LOOPS" --"$2" --size "$SIZE" --of "$OF" |
    tee -a "$RUN/ofbench.log" | awk -F'= ' '/^RESULT/ { split($2, v, "/"); print v[3] }'
}

declare -A T L
measure() { # name port
  wait_port "$2"
  T[$1]=$(bench "$2" throughput)
  L[$1]=$(bench "$2" latency)
  kill "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null || true
}

NAMES=()
"$TANDEM" controller --listen 127.0.0.1:16653 --backend cpu --log warn & PIDS+=($!)
measure "tandem controller (cpu)" 16653; NAMES+=("tandem controller (cpu)")
"$TANDEM" controller --listen 127.0.0.1:16663 --backend scalar --log warn & PIDS+=($!)
measure "tandem controller (scalar)" 16663; NAMES+=("tandem controller (scalar)")
if command -v ovs-testcontroller >/dev/null; then
  mkdir -p "$RUN/ovs"
  OVS_RUNDIR="$RUN/ovs" ovs-testcontroller ptcp:16654:127.0.0.1 -vwarn 2>/dev/null & PIDS+=($!)
  measure "ovs-testcontroller" 16654; NAMES+=("ovs-testcontroller")
else
  echo "ovs-testcontroller not found (Debian openvswitch-testcontroller): skipped" >&2
fi
if [ -n "${OSKEN_PYTHON:-}" ] && [ "$OF" = 1.0 ]; then
  (cd "$RUN" && exec "$OSKEN_PYTHON" "$OLDPWD/bench/osken/l2_learning.py" 16655) >"$RUN/osken.log" 2>&1 & PIDS+=($!)
  measure "os-ken L2 learning (Python)" 16655; NAMES+=("os-ken L2 learning (Python)")
fi

echo
echo "ofbench, 16 switches, $LOOPS loops of 1 s (first left out), packet_in $SIZE B, OpenFlow $OF"
echo
echo "| controller | throughput mode (responses/s) | latency mode (responses/s) | vs ovs-testcontroller (throughput / latency) |"
echo "|---|---|---|---|"
base_t=${T["ovs-testcontroller"]:-}
base_l=${L["ovs-testcontroller"]:-}
for n in "${NAMES[@]}"; do
  ratio="-"
  if [ -n "$base_t" ]; then
    ratio=$(awk -v a="${T[$n]}" -v b="$base_t" -v c="${L[$n]}" -v d="$base_l" 'BEGIN { printf "%.1fx / %.1fx", a / b, c / d }')
  fi
  printf "| %s | %'.0f | %'.0f | %s |\n" "$n" "${T[$n]}" "${L[$n]}" "$ratio"
done
