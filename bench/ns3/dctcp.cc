// dctcp.cc - long TCP flows sharing one switch port: DCTCP + ECN threshold marking vs
// NewReno + drop-tail, for Tandem's simulator validation.
//
// Topology: --flows senders (default 4) and one receiver, each on its own point-to-point link
// (--rate, default 1 Gbps; --delay per link, default 25 us) to one switch (ns-3 IPv4 router
// node, store-and-forward, zero processing delay):
//
//     sender_0..3 --- switch ---[bottleneck egress]--- receiver
//
// One-way propagation sender -> receiver = 2 x delay (50 us); base RTT 4 x delay (100 us).
// Every sender runs one unlimited BulkSendApplication to one PacketSink on the receiver;
// flow i starts at i x --stagger (default 0: all at t = 0). The run lasts --duration.
//
// The bottleneck queue (switch egress toward the receiver) is a queue disc, because ns-3 only
// marks ECN in queue discs:
//
//   --aqm=red (default with --cc=dctcp): RedQueueDisc turned into DCTCP's step marker.
//                  Like ns-3's examples/tcp/dctcp-example.cc we set UseEcn = true,
//                  UseHardDrop = false and QW = 1 (instantaneous queue, no EWMA); unlike it
//                  (MinTh 20, MaxTh 60) we set MinTh = MaxTh = K, and Gentle = false (ns-3's
//                  default Gentle = true would mark only probabilistically between MaxTh and
//                  2 MaxTh). Resulting rule in ns-3 3.37's RedQueueDisc::DoEnqueue: an
//                  arriving ECN-capable packet is CE-marked iff the queue disc already holds
//                  n >= K packets (and n > 1); a packet is dropped if the queue disc holds
//                  --queue-packets packets, or if it is not ECN-capable and n >= K (DCTCP
//                  data is ECT(0); the only not-ECT packets toward the receiver are the
//                  senders' SYNs and handshake ACKs, at t ~ 0 with an empty queue).
//                  K = --k (default 20).
//                  The program checks this rule on every enqueued packet
//                  (bottleneck.marking_rule_violations, expected 0).
//   --aqm=fifo (default with --cc=newreno): FifoQueueDisc (plain tail drop) of
//                  --queue-packets packets.
//
//   In both cases the switch port's device queue below the queue disc is set to 1 packet.
//   ns-3 flow control lets the queue disc hand the device one packet while another is being
//   serialised, so the port holds: queue disc (<= --queue-packets) + 1 packet in the device
//   queue + 1 packet on the wire. The marking threshold only counts the queue disc.
//   The sampled queue length below is queue disc + device queue (= all packets waiting,
//   excluding the one being serialised); the queue-disc-only figures are reported as well.
//
// Other switch ports (toward the senders, ACKs only): DropTail device queue of
// --queue-packets, no queue disc. Host NICs: --host-queue-packets (10000), no queue disc.
//
// Output: one JSON object on stdout (see README.md for every key).

#include "common.h"

using namespace ns3;
using namespace tandem_bench;

namespace
{
/// Application bytes received per sender IPv4 address.
struct RxBySender
{
    std::map<uint32_t, uint64_t> bytes;

    void OnRx(Ptr<const Packet> p, const Address& from)
    {
        bytes[InetSocketAddress::ConvertFrom(from).GetIpv4().Get()] += p->GetSize();
    }
};

/// Self-check of the marking rule "CE iff the queue disc held >= K packets on arrival".
/// Runs on the queue disc's "Enqueue" trace, which fires after the packet joined (so the
/// occupancy seen on arrival is GetNPackets() - 1). Counts enqueued packets that break it.
struct MarkingCheck
{
    Ptr<QueueDisc> qdisc;
    uint32_t k = 0;
    uint64_t checked = 0;
    uint64_t violations = 0;

    void OnEnqueue(Ptr<const QueueDiscItem> item)
    {
        Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
        if (!ip)
        {
            return;
        }
        uint32_t before = qdisc->GetNPackets() - 1;
        bool ce = ip->GetHeader().GetEcn() == Ipv4Header::ECN_CE;
        bool ect = ip->GetHeader().GetEcn() != Ipv4Header::ECN_NotECT;
        bool expect = ect && before >= k && before > 1;
        checked++;
        if (ce != expect)
        {
            violations++;
        }
    }
};
} // namespace

int
main(int argc, char* argv[])
{
    // ---- parameters -------------------------------------------------------------------------
    uint32_t nFlows = 4;
    DataRate rate("1Gbps");
    Time delay = MicroSeconds(25);
    Time duration = Seconds(10);
    Time stagger = Seconds(0);
    uint32_t queuePackets = 100;   // queue disc limit on the bottleneck; device queue on others
    uint32_t k = 20;               // DCTCP marking threshold (packets)
    uint32_t bnDeviceQueue = 1;    // device queue under the bottleneck queue disc
    uint32_t hostQueuePackets = 10000;
    Time sampleInterval = MicroSeconds(100);
    Time sampleStart = Seconds(0);
    uint32_t seed = 1;
    uint32_t run = 1;
    uint32_t sendSize = 65536;
    std::string aqm = "auto";      // auto: red for --cc=dctcp, fifo otherwise
    TcpOptions tcp;
    tcp.cc = "dctcp";

    CommandLine cmd(__FILE__);
    cmd.AddValue("flows", "number of long flows (one sender each)", nFlows);
    cmd.AddValue("rate", "rate of every link", rate);
    cmd.AddValue("delay", "one-way propagation delay of each link", delay);
    cmd.AddValue("duration", "simulated time", duration);
    cmd.AddValue("stagger", "flow i starts at i x stagger", stagger);
    cmd.AddValue("queue-packets", "bottleneck queue disc limit (packets)", queuePackets);
    cmd.AddValue("k", "DCTCP marking threshold K (packets)", k);
    cmd.AddValue("aqm", "bottleneck queue disc: auto (red if --cc=dctcp, else fifo) | red | fifo",
                 aqm);
    cmd.AddValue("bn-device-queue", "device queue under the bottleneck queue disc (packets)",
                 bnDeviceQueue);
    cmd.AddValue("host-queue-packets", "host NIC device queue size (packets)", hostQueuePackets);
    cmd.AddValue("sample-interval", "queue sampling period", sampleInterval);
    cmd.AddValue("sample-start", "first queue sample time", sampleStart);
    cmd.AddValue("seed", "RngSeedManager seed", seed);
    cmd.AddValue("run", "RngSeedManager run number", run);
    cmd.AddValue("send-size", "BulkSendApplication SendSize (bytes per write)", sendSize);
    tcp.Register(cmd);
    cmd.Parse(argc, argv);

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);
    tcp.Apply();
    if (aqm == "auto")
    {
        aqm = tcp.cc == "dctcp" ? "red" : "fifo";
    }
    NS_ABORT_MSG_UNLESS(aqm == "red" || aqm == "fifo", "unknown --aqm=" << aqm);
    const bool red = aqm == "red";

    // ---- topology ---------------------------------------------------------------------------
    Ptr<Node> sw = CreateObject<Node>();
    Ptr<Node> receiver = CreateObject<Node>();
    NodeContainer senderNodes;
    senderNodes.Create(nFlows);
    NodeContainer all;
    all.Add(sw);
    all.Add(receiver);
    all.Add(senderNodes);
    InternetStackHelper stack;
    stack.Install(all);

    Ipv4AddressHelper addr;
    NetDeviceContainer rcvDevs =
        MakeLink(sw, receiver, rate, delay, bnDeviceQueue, hostQueuePackets);
    addr.SetBase("10.1.0.0", "255.255.255.0");
    Ipv4InterfaceContainer rcvIf = addr.Assign(rcvDevs);
    std::vector<NetDeviceContainer> senderDevs;
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        NetDeviceContainer d =
            MakeLink(senderNodes.Get(i), sw, rate, delay, hostQueuePackets, queuePackets);
        std::ostringstream base;
        base << "10.2." << i << ".0";
        addr.SetBase(base.str().c_str(), "255.255.255.0");
        addr.Assign(d);
        senderDevs.push_back(d);
    }
    // PITFALL: Assign() installed FqCoDel on every device; remove it everywhere (see
    // common.h), then install the one queue disc we want on the bottleneck port.
    RemoveAllQueueDiscs(all);

    TrafficControlHelper tch;
    QueueSize qdiscLimit(QueueSizeUnit::PACKETS, queuePackets);
    if (red)
    {
        tch.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize", QueueSizeValue(qdiscLimit),
                             "MinTh", DoubleValue(k),
                             "MaxTh", DoubleValue(k),
                             // Instantaneous queue length: avg = 1*q + 0*avg.
                             "QW", DoubleValue(1.0),
                             // Not gentle: avg >= MaxTh always marks (see header comment).
                             "Gentle", BooleanValue(false),
                             "UseEcn", BooleanValue(true),
                             "UseHardDrop", BooleanValue(false),
                             // Only used by RED's idle-time estimate, which QW = 1 cancels;
                             // set to the real values anyway.
                             "MeanPktSize", UintegerValue(1500),
                             "LinkBandwidth", DataRateValue(rate),
                             "LinkDelay", TimeValue(delay));
    }
    else
    {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(qdiscLimit));
    }
    QueueDiscContainer qdiscs = tch.Install(rcvDevs.Get(0));
    Ptr<QueueDisc> qdisc = qdiscs.Get(0);
    MarkingCheck markCheck;
    markCheck.qdisc = qdisc;
    markCheck.k = k;
    if (red)
    {
        qdisc->TraceConnectWithoutContext("Enqueue",
                                          MakeCallback(&MarkingCheck::OnEnqueue, &markCheck));
    }

    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // ---- applications -----------------------------------------------------------------------
    const uint16_t port = 5000;
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory", AnyAddress(port));
    ApplicationContainer sinkApps = sinkHelper.Install(receiver);
    sinkApps.Start(Seconds(0));
    Ptr<PacketSink> sink = DynamicCast<PacketSink>(sinkApps.Get(0));

    // Per-flow received bytes, keyed by sender IP (PacketSink "Rx" gives the peer address).
    RxBySender rxBySender;
    sink->TraceConnectWithoutContext("Rx", MakeCallback(&RxBySender::OnRx, &rxBySender));

    TcpMonitor mon;
    std::vector<Ipv4Address> senderAddrs;
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(rcvIf.GetAddress(1), port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(sendSize));
        ApplicationContainer a = bulk.Install(senderNodes.Get(i));
        Time start = stagger * i;
        a.Start(start);
        mon.AttachAfterStart(DynamicCast<BulkSendApplication>(a.Get(0)), start);
        senderAddrs.push_back(senderNodes.Get(i)->GetObject<Ipv4>()->GetAddress(1, 0).GetLocal());
    }

    // ---- instrumentation --------------------------------------------------------------------
    Ptr<Queue<Packet>> bnDevQueue = DevQueue(rcvDevs.Get(0));
    TcDropCounter swDrops(sw, port);
    std::vector<std::unique_ptr<TcDropCounter>> hostDropCounters;
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        hostDropCounters.emplace_back(new TcDropCounter(senderNodes.Get(i), port));
    }
    hostDropCounters.emplace_back(new TcDropCounter(receiver, port));
    TxCounter bnTx(rcvDevs.Get(0));

    Sampler qTotal(
        [qdisc, bnDevQueue]() {
            return static_cast<double>(qdisc->GetNPackets() + bnDevQueue->GetNPackets());
        },
        sampleStart, sampleInterval, duration);
    Sampler qDiscOnly([qdisc]() { return static_cast<double>(qdisc->GetNPackets()); },
                      sampleStart, sampleInterval, duration);

    Simulator::Stop(duration);
    double wall = RunTimed();
    uint64_t events = Simulator::GetEventCount();

    // ---- results ----------------------------------------------------------------------------
    const QueueDisc::Stats& st = qdisc->GetStats();
    uint64_t qdDrops = st.nTotalDroppedPackets;
    uint64_t marks = st.nTotalMarkedPackets;
    // Drops at the bottleneck port: queue disc drops + anything lost between the queue disc and
    // the device (should be 0) + traffic-control drops toward the receiver (impossible with a
    // queue disc installed; kept for symmetry with bulk/incast).
    uint64_t bnDrops = qdDrops + bnDevQueue->GetTotalDroppedPackets() + swDrops.toPort;
    uint64_t hostDrops = 0;
    for (auto& c : hostDropCounters)
    {
        hostDrops += c->total;
    }
    for (auto& d : senderDevs)
    {
        hostDrops += DevQueueDrops(d.Get(0));
    }
    hostDrops += DevQueueDrops(rcvDevs.Get(1));

    uint64_t rx = sink->GetTotalRx();
    double T = duration.GetSeconds();
    std::vector<double> perFlow;
    double sum = 0, sumSq = 0;
    for (auto& a : senderAddrs)
    {
        double g = static_cast<double>(rxBySender.bytes[a.Get()]) * 8.0 / T;
        perFlow.push_back(g);
        sum += g;
        sumSq += g * g;
    }
    double jain = sumSq > 0 ? sum * sum / (perFlow.size() * sumSq) : 0.0;

    Json params;
    params.Str("topology", "star: senders -> switch -> receiver")
        .UInt("flows", nFlows)
        .Num("rate_bps", static_cast<double>(rate.GetBitRate()))
        .Num("delay_per_link_s", delay.GetSeconds())
        .Num("one_way_prop_delay_s", 2 * delay.GetSeconds())
        .Num("base_rtt_s", 4 * delay.GetSeconds())
        .Num("duration_s", T)
        .Num("stagger_s", stagger.GetSeconds())
        .Str("aqm", aqm)
        .Str("bottleneck_qdisc", red ? "RedQueueDisc(MinTh=MaxTh=K, QW=1, ECN, not gentle)"
                                     : "FifoQueueDisc")
        .UInt("queue_packets", queuePackets)
        .UInt("k_packets", red ? k : 0)
        .UInt("bn_device_queue_packets", bnDeviceQueue)
        .UInt("host_queue_packets", hostQueuePackets)
        .UInt("framing_overhead_bytes", 2)
        .Num("sample_interval_s", sampleInterval.GetSeconds())
        .Num("sample_start_s", sampleStart.GetSeconds())
        .UInt("send_size", sendSize)
        .UInt("seed", seed)
        .UInt("run", run)
        .Obj("tcp", tcp.ToJson());

    Json bn;
    bn.UInt("drops", bnDrops)
        .UInt("qdisc_drops", qdDrops)
        .UInt("marks", marks)
        .UInt("qdisc_enqueued", st.nTotalEnqueuedPackets)
        .UInt("marking_rule_checked", markCheck.checked)
        .UInt("marking_rule_violations", markCheck.violations)
        .UInt("tx_packets", bnTx.packets)
        .UInt("tx_bytes_incl_ppp", bnTx.bytes)
        .UInt("max_frame_bytes", bnTx.maxPacket)
        .Num("utilisation", static_cast<double>(bnTx.bytes) * 8.0 /
                                (static_cast<double>(rate.GetBitRate()) * T))
        .UInt("queue_samples", qTotal.samples.size())
        .Num("queue_mean_pkts", Mean(qTotal.samples))
        .Num("queue_p99_pkts", Percentile(qTotal.samples, 99))
        .Num("queue_max_pkts", Max(qTotal.samples))
        .Num("qdisc_mean_pkts", Mean(qDiscOnly.samples))
        .Num("qdisc_p99_pkts", Percentile(qDiscOnly.samples, 99))
        .Num("qdisc_max_pkts", Max(qDiscOnly.samples));

    Json out;
    out.Str("program", "dctcp");
    AddVersion(out);
    out.Obj("params", params)
        .Num("goodput_bps", static_cast<double>(rx) * 8.0 / T)
        .NumArray("flow_goodput_bps", perFlow)
        .Num("jain_fairness", jain)
        .UInt("rx_bytes", rx)
        .Num("queue_mean_pkts", Mean(qTotal.samples))
        .Num("queue_p99_pkts", Percentile(qTotal.samples, 99))
        .UInt("drops", bnDrops)
        .UInt("marks", marks)
        .UInt("retransmits", mon.retransmits)
        .UInt("timeouts", mon.timeouts)
        .UInt("host_drops", hostDrops)
        .Obj("bottleneck", bn)
        .Obj("tcp_stats", mon.ToJson())
        .Num("wall_s", wall)
        .UInt("events", events)
        .Num("events_per_wall_s", wall > 0 ? events / wall : 0.0);

    Simulator::Destroy();
    std::cout << out.ToString() << std::endl;
    return 0;
}
