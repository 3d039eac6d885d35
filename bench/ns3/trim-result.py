#!/usr/bin/env python3
import json, sys
# Keeps what Tandem's validation reads (and the run's identity) from a bench/ns3/scenario result.
for p in sys.argv[1:]:
    d = json.load(open(p))
    keep_top = ["program", "simulator", "ns3_version", "ns3_build_profile", "duration_s", "switch_drops_total", "host_drops", "marks_total", "wall_s", "events"]
    out = {k: d[k] for k in keep_top if k in d}
    out["flows"] = [{k: f.get(k) for k in ["id", "src", "dst", "bytes", "start_s", "end_s", "rx_bytes", "retransmits", "timeouts"]} for f in d["flows"]]
    out["ports"] = [{k: x.get(k) for k in ["node", "port", "drops", "marks", "tx_packets", "queue_samples", "queue_mean_pkts", "queue_p99_pkts", "queue_max_pkts"]} for x in d["ports"]]
    json.dump(out, open(p, "w"), separators=(",", ":"))
