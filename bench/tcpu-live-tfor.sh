#!/usr/bin/env bash
# TCPU live (issue 19): the traffic offload ratio the live run achieved against what
# `tandem analyze offload` computes for the same k on a capture of the same run.
#
# A four-host TCPU lab (labs/tcpu.toml, k = 16) carries the integration test's traffic: two
# iperf3 elephants (10 s), 200 concurrent short TCP connections, a shrew attacker. Every host
# captures what it sends (dumpcap on eth0, 128-byte snaplen, one copy of each packet); the
# captures are merged and analysed with `tandem analyze offload --k 16 --interval 1s`.
#   live TFOR    = bytes the switch table forwarded / (those + bytes the CPU path forwarded),
#                  from the controller's counters (OVS's entry byte counters and the core's);
#   offline TFOR = the share of each second's bytes in that second's 16 largest flows, weighted
#                  by the seconds' bytes: the ideal top-k with perfect knowledge, no table
#                  channel and no reaction time.
# Needs root, Open vSwitch, iperf3, python3, tshark (dumpcap, mergecap), ethtool, iproute2.
#
#   bench/tcpu-live-tfor.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib/live.sh
need_root
build_tandem
lab_workdir tcpu-tfor
sed -e 's/prefix = "tt"/prefix = "tf"/' -e 's/hosts = 3/hosts = 4/' -e 's/^ports = 3/ports = 4/' labs/tcpu.toml > "$work/lab.toml"
"$T" lab up "$work/lab.toml" --state "$work/state" >/dev/null
ns() { ip netns exec "tf-h$1" "${@:2}"; }

for h in 1 2 3 4; do
  bg_in tf "$h" dumpcap -q -i eth0 -s 128 -f "src host 10.77.0.$h" -w "$work/h$h.pcapng"
done
bg_in tf 3 iperf3 -s -1 -p 5201
bg_in tf 3 iperf3 -s -1 -p 5202
bg_in tf 3 python3 -c "$ECHO_SERVER" 10.77.0.3 9000 2000
sleep 1
ns 1 iperf3 -c 10.77.0.3 -p 5201 -t 10 >/dev/null & e1=$!
ns 2 iperf3 -c 10.77.0.3 -p 5202 -t 10 >/dev/null & e2=$!
ns 4 python3 -c '
import socket, time
t0, k = time.time(), 0
while time.time() - t0 < 9:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for _ in range(100):
        s.sendto(b"x" * 1000, ("10.77.0.2", 7000))
    s.close(); k += 1
    time.sleep(max(0, t0 + k * 0.32 - time.time()))' & shrew=$!
sleep 1
ns 1 python3 -c '
import asyncio
async def one(i):
    r, w = await asyncio.open_connection("10.77.0.3", 9000)
    w.write(bytes([i % 256]) * 2000); await w.drain()
    await r.readexactly(2000); w.close()
async def main():
    await asyncio.gather(*(one(i) for i in range(200)))
asyncio.run(main())'
wait "$e1" "$e2" "$shrew"
sleep 1
status=$("$T" lab status "$work/lab.toml" --state "$work/state" --json | head -1)
replay=$("$T" lab replay "$work/lab.toml" --state "$work/state")
for i in 0 1 2 3; do kill -INT "${BG_PIDS[$i]}" 2>/dev/null || true; done
sleep 1
mergecap -w "$work/all.pcapng" "$work"/h?.pcapng
"$T" analyze offload "$work/all.pcapng" --k 16 --interval 1s --out "$work/offload" -q >/dev/null
python3 - "$status" "$work/offload/intervals.csv" "$replay" "$(git rev-parse --short HEAD)" <<'PY'
import csv, json, sys
s = json.loads(sys.argv[1])
live = s["asic_bytes"] / (s["asic_bytes"] + s["cpu_bytes"])
rows = list(csv.DictReader(open(sys.argv[2])))
total = sum(int(r["bytes"]) for r in rows)
offline = sum(int(r["bytes"]) * float(r["tfor_k16"]) for r in rows) / total
print(f"TCPU live TFOR, k = 16, commit {sys.argv[4]}")
print()
print("| measure | value |")
print("|---|---|")
print(f"| live TFOR (table bytes / all forwarded bytes) | {live:.2%} |")
print(f"| offline TFOR, `tandem analyze offload --k 16 --interval 1s` on the capture | {offline:.2%} |")
print(f"| live / offline | {live / offline:.3f} |")
print(f"| table bytes / CPU-path bytes (live) | {s['asic_bytes']:,} / {s['cpu_bytes']:,} |")
print(f"| bytes captured | {total:,} in {len(rows)} intervals of 1 s |")
print(f"| flow entries added, swaps, attackers | {s['offloaded_flows']}, {s['swaps']}, {s['attackers']} |")
print()
print(sys.argv[3])
PY
