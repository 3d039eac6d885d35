#!/usr/bin/env bash
# Flow extraction throughput: `tandem pcap flows` against `tshark -q -z conv,tcp` on the same
# generated pcap, in the same run, on the same machine. Prints a markdown table and writes it
# to bench/out/flows-vs-tshark.md.
#
#   bench/flows-vs-tshark.sh [PACKETS]     (default 10,000,000; the file is kept in bench/out/)
set -euo pipefail
cd "$(dirname "$0")/.."
packets=${1:-10000000}
out=bench/out
mkdir -p "$out"
trace="$out/synth-${packets}.pcap"

command -v tshark >/dev/null || { echo "tshark is not installed (apt-get install tshark)"; exit 2; }
cargo build --release -q -p tandem-cli
tandem=target/release/tandem

if [ ! -f "$trace" ]; then
  echo "generating $trace ($packets packets, 96-byte snap length)..."
  "$tandem" pcap synth "$trace" --packets "$packets" --seed 42 --snaplen 96
fi
size=$(stat -c %s "$trace")

# Warm the page cache so both tools read from memory.
cat "$trace" > /dev/null

measure() { # name, command...: prints "wall_s peak_kib"
  local name=$1; shift
  /usr/bin/time -f "%e %M" -o "$out/$name.time" "$@" > "$out/$name.stdout" 2> "$out/$name.stderr"
  cat "$out/$name.time"
}

read -r t_wall t_mem < <(measure tandem "$tandem" pcap flows "$trace" --csv "$out/flows.csv" --quiet)
read -r s_wall s_mem < <(measure tshark tshark -n -q -z conv,tcp -r "$trace")

flows=$(($(wc -l < "$out/flows.csv") - 1))
conv=$(grep -c '<->' "$out/tshark.stdout" || true)
rate() { awk -v p="$packets" -v s="$1" 'BEGIN { printf "%.2f", p / s / 1e6 }'; }
ratio=$(awk -v a="$s_wall" -v b="$t_wall" 'BEGIN { printf "%.1f", a / b }')

{
  echo "Flow extraction on $trace ($packets packets, $((size / 1024 / 1024)) MiB), $(nproc) cores, $(date -u +%F)"
  echo
  echo "| tool | command | wall (s) | Mpkt/s | peak RSS (MiB) | records |"
  echo "|---|---|---|---|---|---|"
  echo "| tandem $("$tandem" --version | cut -d' ' -f2) | \`tandem pcap flows FILE --csv OUT\` | $t_wall | $(rate "$t_wall") | $((t_mem / 1024)) | $flows unidirectional flows |"
  echo "| $(tshark --version 2>/dev/null | head -1 | cut -d' ' -f1-3) | \`tshark -n -q -z conv,tcp -r FILE\` | $s_wall | $(rate "$s_wall") | $((s_mem / 1024)) | $conv TCP conversations |"
  echo
  echo "tandem is ${ratio}x faster."
} | tee "$out/flows-vs-tshark.md"
