// bulk.cc - one long-lived TCP flow through one switch, for Tandem's simulator validation.
//
// Topology (2 links, 3 nodes):
//
//     sender ==[access: --access-rate, --delay]== switch ==[bottleneck: --rate, --delay]== receiver
//
// * The "switch" is an ns-3 IPv4 router node: store-and-forward, zero processing delay, one
//   DropTail device queue per egress port (--queue-packets, default 100 packets).
// * The bottleneck queue is the switch's egress queue toward the receiver.
// * --delay is the one-way propagation delay of EACH link, so the one-way end-to-end
//   propagation delay is 2 x delay (default 2 x 25 us = 50 us) and the base RTT, without
//   serialisation, is 4 x delay (default 100 us).
// * The access link defaults to 10 Gbps, i.e. faster than the 1 Gbps bottleneck. This is a
//   deliberate choice: if the sender's own link were also 1 Gbps, a single flow could never
//   queue at the switch (packets would arrive exactly at the drain rate) and the standing
//   queue and all losses would move into the sender's NIC queue. Run --access-rate=1Gbps to
//   see that case (the JSON then shows the sender NIC queue building: host_nic_queue_max_pkts).
// * Host NIC queues (sender and receiver devices) hold --host-queue-packets (default 10000)
//   so that they never drop; their drops are reported (host_drops) and should be 0.
//
// The application is ns-3's BulkSendApplication (unlimited bytes) into a PacketSink, started
// at t = 0 (the 3-way handshake is inside the measured interval). The simulation stops at
// --duration.
//
// Output: one JSON object on stdout (see README.md for every key).

#include "common.h"

using namespace ns3;
using namespace tandem_bench;

int
main(int argc, char* argv[])
{
    // ---- parameters -------------------------------------------------------------------------
    DataRate rate("1Gbps");         // bottleneck link (switch <-> receiver)
    DataRate accessRate("10Gbps");  // sender <-> switch
    Time delay = MicroSeconds(25);  // per link, one way
    Time duration = Seconds(10);    // simulated time
    uint32_t queuePackets = 100;    // switch egress DropTail queue (every port)
    uint32_t hostQueuePackets = 10000; // host NIC queues: large so they never drop
    Time sampleInterval = MicroSeconds(100); // bottleneck queue sampling period
    uint32_t seed = 1;
    uint32_t run = 1;
    uint32_t sendSize = 65536;      // bytes per Send() call of BulkSendApplication
    TcpOptions tcp;

    CommandLine cmd(__FILE__);
    cmd.AddValue("rate", "bottleneck link rate (switch <-> receiver)", rate);
    cmd.AddValue("access-rate", "sender <-> switch link rate", accessRate);
    cmd.AddValue("delay", "one-way propagation delay of each of the 2 links", delay);
    cmd.AddValue("duration", "simulated time", duration);
    cmd.AddValue("queue-packets", "switch egress DropTail queue size (packets)", queuePackets);
    cmd.AddValue("host-queue-packets", "host NIC device queue size (packets)", hostQueuePackets);
    cmd.AddValue("sample-interval", "bottleneck queue sampling period (0 = off)", sampleInterval);
    cmd.AddValue("seed", "RngSeedManager seed", seed);
    cmd.AddValue("run", "RngSeedManager run number", run);
    cmd.AddValue("send-size", "BulkSendApplication SendSize (bytes per write)", sendSize);
    tcp.Register(cmd);
    cmd.Parse(argc, argv);

    // Determinism: nothing in this scenario draws random numbers (ns-3 TCP uses ISN 0 and
    // deterministic ports), but fix the streams anyway.
    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);

    tcp.Apply();

    // ---- topology ---------------------------------------------------------------------------
    NodeContainer nodes;
    nodes.Create(3);
    Ptr<Node> sender = nodes.Get(0);
    Ptr<Node> sw = nodes.Get(1);
    Ptr<Node> receiver = nodes.Get(2);

    // MakeLink(a, b, ...): device 0 is on a, device 1 on b; queue sizes per end.
    NetDeviceContainer accessDevs =
        MakeLink(sender, sw, accessRate, delay, hostQueuePackets, queuePackets);
    NetDeviceContainer bnDevs = MakeLink(sw, receiver, rate, delay, queuePackets, hostQueuePackets);

    InternetStackHelper stack;
    stack.Install(nodes);

    Ipv4AddressHelper addr;
    addr.SetBase("10.0.1.0", "255.255.255.0");
    addr.Assign(accessDevs);
    addr.SetBase("10.0.2.0", "255.255.255.0");
    Ipv4InterfaceContainer bnIf = addr.Assign(bnDevs);
    // PITFALL: Assign() just installed FqCoDel on every device; remove it (see common.h).
    RemoveAllQueueDiscs(nodes);

    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // ---- applications -----------------------------------------------------------------------
    const uint16_t port = 5000;
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory", AnyAddress(port));
    ApplicationContainer sinkApps = sinkHelper.Install(receiver);
    sinkApps.Start(Seconds(0));
    Ptr<PacketSink> sink = DynamicCast<PacketSink>(sinkApps.Get(0));

    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(bnIf.GetAddress(1), port));
    bulk.SetAttribute("MaxBytes", UintegerValue(0)); // unlimited
    bulk.SetAttribute("SendSize", UintegerValue(sendSize));
    ApplicationContainer bulkApps = bulk.Install(sender);
    bulkApps.Start(Seconds(0));
    Ptr<BulkSendApplication> app = DynamicCast<BulkSendApplication>(bulkApps.Get(0));

    // ---- instrumentation --------------------------------------------------------------------
    TcpMonitor mon;
    mon.AttachAfterStart(app, Seconds(0));

    // Bottleneck = switch egress toward the receiver (bnDevs.Get(0)).
    Ptr<Queue<Packet>> bnQueue = DevQueue(bnDevs.Get(0));
    Ptr<Queue<Packet>> senderNicQueue = DevQueue(accessDevs.Get(0));
    TcDropCounter swDrops(sw, port);
    TcDropCounter senderDrops(sender, port);
    TcDropCounter receiverDrops(receiver, port);
    TxCounter bnTx(bnDevs.Get(0));

    Sampler qSampler([bnQueue]() { return static_cast<double>(bnQueue->GetNPackets()); },
                     Seconds(0), sampleInterval, duration);
    Sampler nicSampler(
        [senderNicQueue]() { return static_cast<double>(senderNicQueue->GetNPackets()); },
        Seconds(0), sampleInterval, duration);

    Simulator::Stop(duration);
    double wall = RunTimed();
    uint64_t events = Simulator::GetEventCount();

    // ---- results ----------------------------------------------------------------------------
    uint64_t rx = sink->GetTotalRx();
    double goodput = static_cast<double>(rx) * 8.0 / duration.GetSeconds();
    // Drops at the bottleneck: tail drops show up in the switch's traffic-control layer
    // (destination port = sink's, i.e. packets headed for the receiver), plus any drop the
    // device queue itself recorded (should be 0 thanks to flow control).
    uint64_t bnDrops = swDrops.toPort + bnQueue->GetTotalDroppedPackets();
    uint64_t hostDrops = senderDrops.total + receiverDrops.total +
                         DevQueueDrops(accessDevs.Get(0)) + DevQueueDrops(bnDevs.Get(1));
    double util = static_cast<double>(bnTx.bytes) * 8.0 /
                  (static_cast<double>(rate.GetBitRate()) * duration.GetSeconds());

    Json params;
    params.Str("topology", "sender -(access)- switch -(bottleneck)- receiver")
        .Num("rate_bps", static_cast<double>(rate.GetBitRate()))
        .Num("access_rate_bps", static_cast<double>(accessRate.GetBitRate()))
        .Num("delay_per_link_s", delay.GetSeconds())
        .Num("one_way_prop_delay_s", 2 * delay.GetSeconds())
        .Num("base_rtt_s", 4 * delay.GetSeconds())
        .Num("duration_s", duration.GetSeconds())
        .UInt("queue_packets", queuePackets)
        .UInt("host_queue_packets", hostQueuePackets)
        .UInt("framing_overhead_bytes", 2)
        .Num("sample_interval_s", sampleInterval.GetSeconds())
        .UInt("send_size", sendSize)
        .UInt("seed", seed)
        .UInt("run", run)
        .Obj("tcp", tcp.ToJson());

    Json bn;
    bn.UInt("drops", bnDrops)
        .UInt("tx_packets", bnTx.packets)
        .UInt("tx_bytes_incl_ppp", bnTx.bytes)
        .UInt("max_frame_bytes", bnTx.maxPacket)
        .Num("utilisation", util)
        .UInt("queue_samples", qSampler.samples.size())
        .Num("queue_mean_pkts", Mean(qSampler.samples))
        .Num("queue_p99_pkts", Percentile(qSampler.samples, 99))
        .Num("queue_max_pkts", Max(qSampler.samples));

    Json out;
    out.Str("program", "bulk");
    AddVersion(out);
    out.Obj("params", params)
        .Num("goodput_bps", goodput)
        .UInt("rx_bytes", rx)
        .UInt("drops", bnDrops)
        .UInt("retransmits", mon.retransmits)
        .UInt("timeouts", mon.timeouts)
        .UInt("host_drops", hostDrops)
        .UInt("switch_drops_total", swDrops.total + bnQueue->GetTotalDroppedPackets())
        .Num("host_nic_queue_max_pkts", Max(nicSampler.samples))
        .Obj("bottleneck", bn)
        .Obj("tcp_stats", mon.ToJson())
        .Num("wall_s", wall)
        .UInt("events", events)
        .Num("events_per_wall_s", wall > 0 ? events / wall : 0.0);

    Simulator::Destroy();
    std::cout << out.ToString() << std::endl;
    return 0;
}
