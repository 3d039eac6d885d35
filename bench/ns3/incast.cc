// incast.cc - N-to-1 TCP incast on a one-switch star, for Tandem's simulator validation.
//
// Topology: --senders hosts (default 16) and one receiver, each on its own point-to-point
// link (--rate, default 1 Gbps; --delay per link, default 25 us) to one switch:
//
//     sender_0 ---+
//     sender_1 ---+
//        ...      +--- switch ---[bottleneck egress: DropTail --queue-packets]--- receiver
//     sender_15 --+
//
// * Every path sender -> receiver is 2 links: one-way propagation 2 x delay (50 us), base RTT
//   4 x delay (100 us) plus serialisation.
// * The switch is an ns-3 IPv4 router node (store-and-forward, zero processing delay). Each
//   egress port has a DropTail device queue of --queue-packets (default 100) packets waiting
//   + 1 in transmission, and no queue disc. Only the port toward the receiver congests.
// * Host NIC queues hold --host-queue-packets (10000) so hosts never drop (host_drops).
//
// Workload (barrier / "synchronised reads" model):
// * Round r starts at time T_r. At T_r every sender opens a NEW TCP connection to the
//   receiver (a fresh BulkSendApplication with MaxBytes = --bytes, default 65536) and sends
//   --bytes bytes, then closes. No request packet is modelled: all senders start at T_r
//   (with --jitter=J > 0, sender i starts at T_r + U_i, U_i ~ uniform[0, J) from a seeded
//   ns-3 stream; default J = 0).
// * A flow completes when the receiver's PacketSink has received all --bytes of it. Flow
//   completion time (FCT) = completion time - the flow's start (T_r + U_i); it includes the
//   3-way handshake (the SYN leaves at the flow's start).
// * With J = 0 every round starts from the same state (fresh connections, empty queues: the
//   round ends only when every data byte has been delivered), so all rounds are identical.
// * Round completion time (RCT) = the time the last byte of the round reaches the receiver
//   application, minus T_r (= max FCT when J = 0).
// * Barrier: T_{r+1} = T_r + RCT_r + --round-gap (default 0): the next round starts the
//   instant the last byte of the previous round arrives (an idealised, zero-delay barrier).
//   FIN exchanges of the old connections overlap with the new round.
// * T_0 = 0. The run ends when --rounds rounds (default 100) have completed (or at --max-time).
//
// Output: one JSON object on stdout (see README.md for every key).

#include "common.h"

using namespace ns3;
using namespace tandem_bench;

namespace
{

/// Drives the rounds: creates the senders' applications and watches the sink.
class IncastDriver
{
  public:
    std::vector<Ptr<Node>> senders;
    std::vector<Ipv4Address> senderAddrs;
    Address sinkAddress;
    uint32_t bytes = 65536;
    uint32_t rounds = 100;
    Time gap = Seconds(0);
    Time jitter = Seconds(0);
    Ptr<UniformRandomVariable> rng;
    TcpMonitor* mon = nullptr;

    std::vector<double> fcts;      // every flow's FCT (s), in completion order
    std::vector<double> rcts;      // every round's RCT (s)
    uint32_t completedRounds = 0;
    Time firstStart;
    Time lastEnd;
    uint64_t totalBytes = 0;

    void Start(Time at)
    {
        Simulator::Schedule(at, &IncastDriver::StartRound, this);
    }

    /// PacketSink "Rx" trace: bytes of one flow arrived at the receiver application.
    void OnRx(Ptr<const Packet> p, const Address& from)
    {
        Ipv4Address src = InetSocketAddress::ConvertFrom(from).GetIpv4();
        auto it = m_index.find(src.Get());
        NS_ABORT_MSG_IF(it == m_index.end(), "data from unknown sender " << src);
        uint32_t i = it->second;
        totalBytes += p->GetSize();
        NS_ABORT_MSG_IF(m_done[i], "sender " << i << " sent more than --bytes in round");
        m_got[i] += p->GetSize();
        if (m_got[i] >= bytes)
        {
            m_done[i] = true;
            m_nDone++;
            fcts.push_back((Simulator::Now() - m_roundStart - m_offset[i]).GetSeconds());
            if (m_nDone == senders.size())
            {
                EndRound();
            }
        }
    }

    void Init()
    {
        for (uint32_t i = 0; i < senderAddrs.size(); ++i)
        {
            m_index[senderAddrs[i].Get()] = i;
        }
    }

  private:
    std::map<uint32_t, uint32_t> m_index; // sender IPv4 -> index
    std::vector<uint64_t> m_got;
    std::vector<bool> m_done;
    std::vector<Time> m_offset; // sender i starts at round start + m_offset[i]
    uint32_t m_nDone = 0;
    Time m_roundStart;

    void StartRound()
    {
        m_roundStart = Simulator::Now();
        if (completedRounds == 0)
        {
            firstStart = m_roundStart;
        }
        m_got.assign(senders.size(), 0);
        m_done.assign(senders.size(), false);
        m_offset.assign(senders.size(), Seconds(0));
        m_nDone = 0;
        for (uint32_t i = 0; i < senders.size(); ++i)
        {
            // Optional start jitter, uniform in [0, jitter), drawn in sender order from one
            // seeded stream. Default 0: every sender starts exactly at the round start.
            if (jitter.IsStrictlyPositive())
            {
                double ns = rng->GetValue(0.0, static_cast<double>(jitter.GetNanoSeconds()));
                m_offset[i] = NanoSeconds(static_cast<int64_t>(ns));
            }
            // A new BulkSendApplication = a new TCP connection (new ephemeral port) per round.
            BulkSendHelper bulk("ns3::TcpSocketFactory", sinkAddress);
            bulk.SetAttribute("MaxBytes", UintegerValue(bytes));
            // One write of the whole response (the socket buffer is large enough).
            bulk.SetAttribute("SendSize", UintegerValue(bytes));
            ApplicationContainer a = bulk.Install(senders[i]);
            // Node::AddApplication (inside Install) schedules the app's Initialize at +0,
            // which schedules StartApplication at +offset (the start time is relative).
            a.Start(m_offset[i]);
            mon->AttachAfterStart(DynamicCast<BulkSendApplication>(a.Get(0)), m_offset[i]);
        }
    }

    void EndRound()
    {
        Time now = Simulator::Now();
        rcts.push_back((now - m_roundStart).GetSeconds());
        completedRounds++;
        lastEnd = now;
        if (completedRounds >= rounds)
        {
            Simulator::Stop();
            return;
        }
        Simulator::Schedule(gap, &IncastDriver::StartRound, this);
    }
};

} // namespace

int
main(int argc, char* argv[])
{
    // ---- parameters -------------------------------------------------------------------------
    uint32_t nSenders = 16;
    DataRate rate("1Gbps");       // every link
    Time delay = MicroSeconds(25); // per link, one way
    uint32_t bytes = 65536;       // per sender per round ("64 KB")
    uint32_t rounds = 100;
    Time gap = Seconds(0);        // idle time between the end of a round and the next start
    Time jitter = Seconds(0);     // per-sender start jitter within a round (0 = none)
    uint32_t queuePackets = 100;  // switch egress DropTail queue (every port)
    uint32_t hostQueuePackets = 10000;
    Time sampleInterval = MicroSeconds(100);
    Time maxTime = Seconds(1000); // safety stop (simulated)
    uint32_t seed = 1;
    uint32_t run = 1;
    TcpOptions tcp;

    CommandLine cmd(__FILE__);
    cmd.AddValue("senders", "number of senders", nSenders);
    cmd.AddValue("rate", "rate of every link", rate);
    cmd.AddValue("delay", "one-way propagation delay of each link", delay);
    cmd.AddValue("bytes", "bytes per sender per round", bytes);
    cmd.AddValue("rounds", "number of rounds", rounds);
    cmd.AddValue("round-gap", "idle time between a round's end and the next round", gap);
    cmd.AddValue("jitter", "each sender starts uniform[0, jitter) after the round start", jitter);
    cmd.AddValue("queue-packets", "switch egress DropTail queue size (packets)", queuePackets);
    cmd.AddValue("host-queue-packets", "host NIC device queue size (packets)", hostQueuePackets);
    cmd.AddValue("sample-interval", "bottleneck queue sampling period (0 = off)", sampleInterval);
    cmd.AddValue("max-time", "simulated-time safety limit", maxTime);
    cmd.AddValue("seed", "RngSeedManager seed", seed);
    cmd.AddValue("run", "RngSeedManager run number", run);
    tcp.Register(cmd);
    cmd.Parse(argc, argv);

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);
    tcp.Apply();

    // ---- topology ---------------------------------------------------------------------------
    Ptr<Node> sw = CreateObject<Node>();
    Ptr<Node> receiver = CreateObject<Node>();
    NodeContainer senderNodes;
    senderNodes.Create(nSenders);
    NodeContainer all;
    all.Add(sw);
    all.Add(receiver);
    all.Add(senderNodes);

    InternetStackHelper stack;
    stack.Install(all);

    Ipv4AddressHelper addr;
    // Receiver link: device 0 on the switch (the bottleneck egress), device 1 on the receiver.
    NetDeviceContainer rcvDevs =
        MakeLink(sw, receiver, rate, delay, queuePackets, hostQueuePackets);
    addr.SetBase("10.1.0.0", "255.255.255.0");
    Ipv4InterfaceContainer rcvIf = addr.Assign(rcvDevs);

    std::vector<Ipv4Address> senderAddrs;
    std::vector<NetDeviceContainer> senderDevs;
    for (uint32_t i = 0; i < nSenders; ++i)
    {
        // Device 0 on the sender (its NIC), device 1 on the switch (egress toward the sender,
        // which only carries ACKs).
        NetDeviceContainer d =
            MakeLink(senderNodes.Get(i), sw, rate, delay, hostQueuePackets, queuePackets);
        std::ostringstream base;
        base << "10.2." << i << ".0";
        addr.SetBase(base.str().c_str(), "255.255.255.0");
        Ipv4InterfaceContainer ifc = addr.Assign(d);
        senderAddrs.push_back(ifc.GetAddress(0));
        senderDevs.push_back(d);
    }
    // PITFALL: Assign() installed FqCoDel on every device; remove it (see common.h).
    RemoveAllQueueDiscs(all);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // ---- applications -----------------------------------------------------------------------
    const uint16_t port = 5000;
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory", AnyAddress(port));
    ApplicationContainer sinkApps = sinkHelper.Install(receiver);
    sinkApps.Start(Seconds(0));
    Ptr<PacketSink> sink = DynamicCast<PacketSink>(sinkApps.Get(0));

    TcpMonitor mon;
    IncastDriver drv;
    for (uint32_t i = 0; i < nSenders; ++i)
    {
        drv.senders.push_back(senderNodes.Get(i));
    }
    drv.senderAddrs = senderAddrs;
    drv.sinkAddress = InetSocketAddress(rcvIf.GetAddress(1), port);
    drv.bytes = bytes;
    drv.rounds = rounds;
    drv.gap = gap;
    drv.jitter = jitter;
    drv.rng = CreateObject<UniformRandomVariable>();
    drv.rng->SetStream(1); // fixed stream: draws depend only on --seed/--run
    drv.mon = &mon;
    drv.Init();
    sink->TraceConnectWithoutContext("Rx", MakeCallback(&IncastDriver::OnRx, &drv));
    drv.Start(Seconds(0));

    // ---- instrumentation --------------------------------------------------------------------
    Ptr<Queue<Packet>> bnQueue = DevQueue(rcvDevs.Get(0));
    TcDropCounter swDrops(sw, port);
    std::vector<std::unique_ptr<TcDropCounter>> hostDropCounters;
    for (uint32_t i = 0; i < nSenders; ++i)
    {
        hostDropCounters.emplace_back(new TcDropCounter(senderNodes.Get(i), port));
    }
    hostDropCounters.emplace_back(new TcDropCounter(receiver, port));
    TxCounter bnTx(rcvDevs.Get(0));
    if (std::getenv("NS3_DROPS"))
    {
        // Diagnostics: one stderr line per bottleneck drop (time us, source address, seq).
        sw->GetObject<TrafficControlLayer>()->TraceConnectWithoutContext(
            "TcDrop", MakeCallback(+[](Ptr<const Packet> p) {
                Ptr<Packet> c = p->Copy();
                Ipv4Header ip;
                c->RemoveHeader(ip);
                TcpHeader tcp;
                c->PeekHeader(tcp);
                std::cerr << Simulator::Now().GetNanoSeconds() / 1000 << " DROP " << ip.GetSource()
                          << " seg " << tcp.GetSequenceNumber().GetValue() / 1448 << std::endl;
            }));
    }
    Sampler qSampler([bnQueue]() { return static_cast<double>(bnQueue->GetNPackets()); },
                     Seconds(0), sampleInterval, maxTime);

    Simulator::Stop(maxTime);
    double wall = RunTimed();
    uint64_t events = Simulator::GetEventCount();

    // ---- results ----------------------------------------------------------------------------
    uint64_t bnDrops = swDrops.toPort + bnQueue->GetTotalDroppedPackets();
    uint64_t hostDrops = 0;
    for (auto& c : hostDropCounters)
    {
        hostDrops += c->total;
    }
    hostDrops += DevQueueDrops(rcvDevs.Get(1));
    for (auto& d : senderDevs)
    {
        hostDrops += DevQueueDrops(d.Get(0));
    }
    double span = (drv.lastEnd - drv.firstStart).GetSeconds();
    double goodput = span > 0 ? static_cast<double>(drv.totalBytes) * 8.0 / span : 0.0;
    uint64_t roundsWithTimeout = 0;
    for (double r : drv.rcts)
    {
        // A round that took at least MinRto must have waited for a retransmission timer.
        if (r >= tcp.minRto.GetSeconds())
        {
            roundsWithTimeout++;
        }
    }

    Json params;
    params.Str("topology", "star: senders -> switch -> receiver")
        .UInt("senders", nSenders)
        .Num("rate_bps", static_cast<double>(rate.GetBitRate()))
        .Num("delay_per_link_s", delay.GetSeconds())
        .Num("one_way_prop_delay_s", 2 * delay.GetSeconds())
        .Num("base_rtt_s", 4 * delay.GetSeconds())
        .UInt("bytes_per_sender", bytes)
        .UInt("rounds", rounds)
        .Num("round_gap_s", gap.GetSeconds())
        .Num("jitter_s", jitter.GetSeconds())
        .Str("barrier", "next round starts round_gap after the last byte of the round reaches "
                        "the receiver application; new TCP connection per flow per round")
        .UInt("queue_packets", queuePackets)
        .UInt("host_queue_packets", hostQueuePackets)
        .UInt("framing_overhead_bytes", 2)
        .Num("sample_interval_s", sampleInterval.GetSeconds())
        .Num("max_time_s", maxTime.GetSeconds())
        .UInt("seed", seed)
        .UInt("run", run)
        .Obj("tcp", tcp.ToJson());

    Json rct;
    rct.Num("mean_s", Mean(drv.rcts))
        .Num("p50_s", Percentile(drv.rcts, 50))
        .Num("p99_s", Percentile(drv.rcts, 99))
        .Num("max_s", Max(drv.rcts))
        .Num("min_s", drv.rcts.empty() ? 0.0 : *std::min_element(drv.rcts.begin(), drv.rcts.end()));
    Json fct;
    fct.UInt("flows", drv.fcts.size())
        .Num("mean_s", Mean(drv.fcts))
        .Num("p50_s", Percentile(drv.fcts, 50))
        .Num("p99_s", Percentile(drv.fcts, 99))
        .Num("max_s", Max(drv.fcts));

    Json bn;
    bn.UInt("drops", bnDrops)
        .UInt("tx_packets", bnTx.packets)
        .UInt("tx_bytes_incl_ppp", bnTx.bytes)
        .UInt("max_frame_bytes", bnTx.maxPacket)
        .UInt("queue_samples", qSampler.samples.size())
        .Num("queue_mean_pkts", Mean(qSampler.samples))
        .Num("queue_p99_pkts", Percentile(qSampler.samples, 99))
        .Num("queue_max_pkts", Max(qSampler.samples));

    Json out;
    out.Str("program", "incast");
    AddVersion(out);
    out.Obj("params", params)
        .UInt("completed_rounds", drv.completedRounds)
        .Num("sim_time_s", span)
        .Obj("round_completion", rct)
        .Obj("flow_completion", fct)
        .UInt("rx_bytes", drv.totalBytes)
        .UInt("sink_total_rx", sink->GetTotalRx())
        .Num("goodput_bps", goodput)
        .UInt("drops", bnDrops)
        .UInt("retransmits", mon.retransmits)
        .UInt("timeouts", mon.timeouts)
        .UInt("rounds_with_rct_ge_min_rto", roundsWithTimeout)
        .UInt("host_drops", hostDrops)
        .UInt("switch_drops_total", swDrops.total + bnQueue->GetTotalDroppedPackets())
        .UInt("sockets_monitored", mon.socketsAttached)
        .Obj("bottleneck", bn)
        .Obj("tcp_stats", mon.ToJson())
        .NumArray("rct_s", drv.rcts)
        .Num("wall_s", wall)
        .UInt("events", events)
        .Num("events_per_wall_s", wall > 0 ? events / wall : 0.0);

    Simulator::Destroy();
    std::cout << out.ToString() << std::endl;
    return 0;
}
