# Shared by the live lab benchmarks (sourced, not run): the root check, the release binary,
# background processes in a lab's hosts stopped by PID, and the small traffic programs.

# Exits unless root (the labs make network namespaces).
need_root() {
  [ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)" >&2; exit 2; }
}

# Builds the release `tandem` and sets T to it.
build_tandem() {
  cargo build --release -q -p tandem-cli
  T=$PWD/target/release/tandem
}

# bg_in PREFIX H CMD...: runs CMD in host H of the lab named PREFIX in the background. `ip netns
# exec` runs it as its own process, so the recorded PID is the program itself, and it has no
# output that would hold a caller's pipe open. stop_bg stops them all.
BG_PIDS=()
bg_in() {
  local ns="$1-h$2"
  shift 2
  ip netns exec "$ns" "$@" >/dev/null 2>&1 &
  BG_PIDS+=($!)
}
stop_bg() {
  for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  BG_PIDS=()
}

# lab_workdir NAME: makes WORK, a temporary folder for one lab run (its lab file goes to
# WORK/lab.toml, its state to WORK/state), and on exit stops the background processes, takes
# that lab down and removes WORK. Needs T (build_tandem).
lab_workdir() {
  work=$(mktemp -d "/tmp/tandem-$1-XXXXXX")
  trap lab_cleanup EXIT
}
lab_cleanup() {
  stop_bg
  wait 2>/dev/null || true
  "$T" lab down "$work/lab.toml" --state "$work/state" >/dev/null 2>&1 || true
  rm -rf "$work"
}

# python3 -c "$ECHO_SERVER" ADDR PORT SIZE: answers each connection's SIZE bytes with the same.
ECHO_SERVER='
import asyncio, sys
addr, port, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
async def handle(r, w):
    try:
        w.write(await r.readexactly(size)); await w.drain()
    except Exception:
        pass
    w.close()
async def main():
    async with await asyncio.start_server(handle, addr, port, backlog=1024) as s:
        await s.serve_forever()
asyncio.run(main())'

# python3 -c "$SHORT_CONNECTIONS" ADDR PORT SIZE SECONDS RATE [STEP_AT RATE2]: short TCP
# connections (SIZE bytes each way) at RATE a second for SECONDS, at RATE2 from STEP_AT seconds.
SHORT_CONNECTIONS='
import asyncio, sys, time
addr, port, size, seconds, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
step_at, rate2 = (float(sys.argv[6]), float(sys.argv[7])) if len(sys.argv) > 7 else (seconds, rate)
async def one(i):
    r, w = await asyncio.open_connection(addr, port)
    w.write(bytes([i % 256]) * size); await w.drain()
    await r.readexactly(size); w.close()
async def main():
    # Paced on a schedule (not by sleeping 1/rate after each start), so the rate holds.
    t0, i, due, tasks = time.time(), 0, 0.0, []
    while due < seconds:
        await asyncio.sleep(max(0, t0 + due - time.time()))
        tasks.append(asyncio.create_task(one(i))); i += 1
        due += 1 / (rate if due < step_at else rate2)
    await asyncio.gather(*tasks, return_exceptions=True)
asyncio.run(main())'

# python3 -c "$FLOW_MIX" ADDR PORT SECONDS RATE [STEP_AT RATE2]: UDP flows, each from its own
# source port, arriving as a Poisson process at RATE a second (RATE2 from STEP_AT seconds) for
# SECONDS; each flow is a Pareto-distributed number of packets (shape 1.2, at least 4, at most
# 1,000: heavy-tailed like data-center traffic, mean about 16) of 200 bytes, paced at 100
# packets/s, so a flow lives for some of the app's counter reads and a threshold decides how
# much of it the vswitch carries. Seeded: every run offers the same flows.
FLOW_MIX='
import heapq, random, socket, sys, time
addr, port, seconds, rate = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
step_at, rate2 = (float(sys.argv[5]), float(sys.argv[6])) if len(sys.argv) > 6 else (seconds, rate)
rng, payload, gap = random.Random(1), bytes(200), 0.01
# (due, sequence, socket or None for the next arrival, packets left)
t0, seq, events = time.time(), 1, [(0.0, 0, None, 0)]
while events:
    due, _, s, left = heapq.heappop(events)
    if due >= seconds:
        if s is not None:
            s.close()
        continue
    time.sleep(max(0.0, t0 + due - time.time()))
    if s is None:
        n = min(1000, int(4 / (1 - rng.random()) ** (1 / 1.2)))
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        heapq.heappush(events, (due, seq, s, n))
        heapq.heappush(events, (due + rng.expovariate(rate if due < step_at else rate2), seq + 1, None, 0))
        seq += 2
        continue
    try:
        s.sendto(payload, (addr, port))
    except OSError:
        pass
    if left > 1:
        heapq.heappush(events, (due + gap, seq, s, left - 1))
        seq += 1
    else:
        s.close()'

# python3 -c "$UDP_SINK" ADDR PORT: receives and drops datagrams (no ICMP unreachable back).
UDP_SINK='
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
while True:
    s.recv(2048)'
