#!/usr/bin/env python3
"""Where a scenario's run in Tandem first parts from ns-3 3.37's, packet by packet.

Both tools print one line per packet a switch port takes or drops (ns-3:
`NS3_QTRACE=1 bench/ns3/build/scenario SPEC`; Tandem: `TANDEM_QTRACE=1 tandem sim run`).
This runs both on the same scenario (with `--set` overrides, as `bench/ns3-sweep.py` does),
groups the lines by TCP connection (the k-th connection between two hosts, so the two tools'
port numbers need not agree), makes sequence and acknowledgment numbers relative to each
side's initial sequence number, and compares each connection's lines in order: time, take or
drop, direction, flags, sequence and acknowledgment number. It prints the connections whose
first difference comes earliest, with the lines around it, and the SACK blocks the data's
sender heard last before it.

    bench/ns3/build.sh && cargo build --release -p tandem-cli
    python3 bench/ns3-first-difference.py scenarios/validation/websearch.toml [--set K=V ...] [-n 3]

Hosts are matched by the link their address is on: ns-3 gives each link a /30 in the spec's
link order, host end first, so the spec's `link` lines name the host of each address (in a
star host k is on link k; in a graph the switches' links come first). Outputs stay in
bench/out/first-difference/.
"""
import argparse
import collections
import os
import subprocess

TANDEM = os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "release", "tandem")
NS3 = "bench/ns3/build/scenario"


LINK_HOSTS = []
NODE_NAMES = []


def read_spec(spec):
    """The spec's node names in order (Tandem's trace names node k `hk`) and the host end of
    each `link` line, in order (None for switch-to-switch)."""
    nodes, links = {}, []
    for line in open(spec):
        f = line.split()
        if f[:1] == ["node"]:
            nodes[f[1]] = f[2]
        elif f[:1] == ["link"]:
            links.append(next((n for n in f[1:3] if nodes.get(n) == "host"), None))
    return list(nodes), links


def host_of_ip(ip):
    a = [int(x) for x in ip.split(".")]
    return LINK_HOSTS[((a[1] * 256 + a[2]) * 256 + a[3] - 1) // 4]


def parse(path, ns3):
    """(time ns, Q/D, src, dst, sport, dport, flags, seq, ack, sack blocks) per line."""
    out = []
    for line in open(path):
        f = line.split()
        if len(f) < 10 or f[1] not in ("Q", "D"):
            continue
        s, d = f[2].split(">")
        if ns3:
            s, d = host_of_ip(s), host_of_ip(d)
        else:
            s, d = NODE_NAMES[int(s[1:])], NODE_NAMES[int(d[1:])]
        i = f.index("flags")
        sp, dp = f[f.index("ports") + 1].split(">")
        sack = []
        if "sack" in f:
            sack = [tuple(int(v) for v in b.split("-")) for b in f[f.index("sack") + 1:]]
        out.append((int(f[0]), f[1], s, d, int(sp), int(dp), int(f[i + 1]), int(f[i + 3]), int(f[i + 5]), sack))
    return out


def by_connection(lines):
    """Each connection's lines, numbers relative to the ISNs, and its SACK history."""
    conns, count, isn = {}, collections.Counter(), {}
    res, sacks = collections.defaultdict(list), collections.defaultdict(list)
    for (t, what, s, d, sp, dp, flags, seq, ack, sack) in lines:
        key, rkey = (s, d, sp, dp), (d, s, dp, sp)
        if key not in conns:
            if rkey in conns:
                conns[key] = conns[rkey]
            else:
                count[(s, d)] += 1
                conns[key] = (s, d, count[(s, d)])
        c = conns[key]
        if flags & 2 and key not in isn:
            isn[key] = seq
        rel = lambda v, k: (v - isn.get(k, 0)) % 2**32
        direction = ">" if (s, d) == (c[0], c[1]) else "<"
        res[c].append((t, what, direction, flags & ~8, rel(seq, key), rel(ack, rkey) if flags & 16 else 0))
        if sack:
            sacks[c].append((t, direction, [(rel(a, rkey), rel(b, rkey)) for a, b in sack]))
    return res, sacks


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario")
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("-n", type=int, default=3, help="connections to show")
    a = ap.parse_args()
    d = os.path.join("bench", "out", "first-difference")
    os.makedirs(d, exist_ok=True)
    sets = [x for s in a.set for x in ("--set", s)]
    spec = os.path.join(d, "spec")
    subprocess.run([TANDEM, "sim", "export-ns3", a.scenario, "--out", spec] + sets, check=True,
                   stdout=subprocess.DEVNULL)
    NODE_NAMES[:], LINK_HOSTS[:] = read_spec(spec)
    with open(os.path.join(d, "ns3.txt"), "w") as err:
        subprocess.run([NS3, spec], check=True, stdout=subprocess.DEVNULL, stderr=err,
                       env=dict(os.environ, NS3_QTRACE="1"))
    with open(os.path.join(d, "tandem.txt"), "w") as err:
        subprocess.run([TANDEM, "sim", "run", a.scenario, "--out", os.path.join(d, "run"), "-q"] + sets,
                       check=True, stdout=subprocess.DEVNULL, stderr=err, env=dict(os.environ, TANDEM_QTRACE="1"))
    (x, xs), (y, ys) = (by_connection(parse(os.path.join(d, f), ns3)) for f, ns3 in
                        (("ns3.txt", True), ("tandem.txt", False)))
    first = []
    for c in set(x) | set(y):
        p, q = x.get(c, []), y.get(c, [])
        for i in range(max(len(p), len(q))):
            if i >= len(p) or i >= len(q) or p[i] != q[i]:
                t = min(p[i][0] if i < len(p) else 1 << 62, q[i][0] if i < len(q) else 1 << 62)
                first.append((t, c, i))
                break
    first.sort()
    print(f"{len(first)} of {len(set(x) | set(y))} connections differ")
    for t, c, i in first[: a.n]:
        print(f"\n{c[0]} -> {c[1]}, connection {c[2]}: first difference at {t / 1e6:.6f} ms (line {i})")
        for name, lines, sacks in (("ns-3", x, xs), ("tandem", y, ys)):
            print(f"  {name}:")
            for line in lines.get(c, [])[max(0, i - 3): i + 3]:
                print("    ", line)
            last = [s for s in sacks.get(c, []) if s[0] <= t][-1:]
            if last:
                print("     last SACK blocks before:", last[0])


if __name__ == "__main__":
    main()
