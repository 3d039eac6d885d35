// scenario.cc - a generic ns-3 scenario built from a text spec file, for Tandem's simulator
// validation.
//
//     scenario SPEC [--threshold-qdisc=step|red]
//
// Tandem writes the spec from one of its own scenarios, so that both simulators run exactly the
// same topology (nodes, full-duplex point-to-point links, per-port queues) and the same flow
// list. The spec format (version 1) and the translation of Tandem's queue semantics into ns-3
// queues are documented in README.md ("scenario.cc") and below; the program prints exactly one
// JSON object on stdout. A malformed spec prints `scenario: SPEC:LINE: message` on stderr and
// exits with status 2.
//
// Everything else (links, TCP options, retransmit/timeout accounting, pitfalls) is shared with
// bulk.cc / incast.cc / dctcp.cc through common.h.
//
// Queue translation (Tandem meaning -> ns-3), w = packets waiting at the port excluding the one
// being serialised:
//
//   none L          DropTail device queue of L packets, no queue disc (as bulk.cc): tail drop
//                   iff w = L on arrival.
//   threshold L K   Default (--threshold-qdisc=step): TandemStepQueueDisc (defined below) over
//                   a 1-packet device queue. On arrival it computes w = queue disc packets +
//                   device queue packets and drops iff w >= L, else CE-marks an ECN-capable
//                   packet iff w >= K; not-ECT packets are never dropped by the threshold.
//                   This is Tandem's rule exactly, for every K and L >= 1.
//                   --threshold-qdisc=red: dctcp.cc's RedQueueDisc step marker with
//                   MaxSize = L - 1, MinTh = MaxTh = K - 1, QW = 1, Gentle = false (equivalent
//                   for K >= 3 and ECT traffic; RED also drops not-ECT packets once the queue
//                   disc holds >= K - 1, which Tandem does not).
//   red L min max p qw gentle ecn
//                   RedQueueDisc over a 1-packet device queue, MaxSize = L - 1, MinTh = min - 1,
//                   MaxTh = max - 1, LInterm = 1/p, QW = qw, Gentle, UseEcn = ecn (early
//                   decisions mark ECT packets), ns-3 defaults otherwise (UseHardDrop: forced
//                   decisions drop; Wait; count; idle decay), LinkBandwidth / LinkDelay from
//                   the link, MeanPktSize 1500.

#include "common.h"

#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>

using namespace ns3;
using namespace tandem_bench;

namespace tandem_bench
{

/// IPv4 header (20 bytes) and the largest TCP header (60 bytes: 40 bytes of options).
constexpr uint32_t kMaxTcpIpHeader = 20 + 60;

/// The links' MTU for segments of `mss` bytes: the largest IP packet the TCP can send
/// (`mss` + kMaxTcpIpHeader), or ns-3's default 1500 where that is larger. Tandem has no MTU
/// (it sends every segment whole, jumbo or not); ns-3's IPv4 fragments a packet above its
/// device's MTU, so a spec with MSS 8,948 run on 1500-byte devices sent every segment as
/// seven fragments, each queued and dropped on its own. Specs with the usual segments
/// (MSS 1,448 with timestamps: 1500-byte packets) never reach either bound.
inline uint16_t
LinkMtu(uint32_t mss)
{
    return static_cast<uint16_t>(std::max<uint32_t>(1500, mss + kMaxTcpIpHeader));
}

// ---------------------------------------------------------------------------------------------
// TandemStepQueueDisc: Tandem's threshold queue (DCTCP step marking on the number of packets
// waiting at the port, excluding the one in service).
// ---------------------------------------------------------------------------------------------

/// A FIFO queue disc that sees the device queue under it, so that its rules are stated on
/// w = (packets in this queue disc) + (packets in the device queue) = every packet waiting at
/// the port except the one being serialised (the device queue under it holds 1 packet, and ns-3
/// flow control moves a packet down the instant the device slot frees):
///
///   * an arriving packet is dropped iff w >= LimitPackets (tail drop);
///   * otherwise an ECN-capable one (ECT(0), ECT(1) or CE) is CE-marked iff
///     w >= ThresholdPackets; a not-ECT packet is enqueued unmarked.
///
/// Marks go through QueueDisc::Mark (counted in the stats, "Mark" trace), drops through
/// DropBeforeEnqueue (reason "Tail drop").
class TandemStepQueueDisc : public QueueDisc
{
  public:
    static constexpr const char* TAIL_DROP = "Tail drop";
    static constexpr const char* STEP_MARK = "Step mark";

    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("ns3::TandemStepQueueDisc")
                .SetParent<QueueDisc>()
                .SetGroupName("TrafficControl")
                .AddConstructor<TandemStepQueueDisc>()
                .AddAttribute("LimitPackets",
                              "tail drop iff this many packets wait (queue disc + device queue)",
                              UintegerValue(100),
                              MakeUintegerAccessor(&TandemStepQueueDisc::m_limit),
                              MakeUintegerChecker<uint32_t>(1))
                .AddAttribute("ThresholdPackets",
                              "CE-mark an ECN-capable arrival iff this many packets wait",
                              UintegerValue(20),
                              MakeUintegerAccessor(&TandemStepQueueDisc::m_k),
                              MakeUintegerChecker<uint32_t>());
        return tid;
    }

    TandemStepQueueDisc()
        : QueueDisc(QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE)
    {
    }

    /// The device queue below (its packets count as waiting). Must be set before the run.
    void SetDeviceQueue(Ptr<Queue<Packet>> q)
    {
        m_devQueue = q;
    }

    /// Packets waiting at the port: this queue disc + the device queue below it.
    uint32_t Waiting() const
    {
        return GetNPackets() + (m_devQueue ? m_devQueue->GetNPackets() : 0);
    }

  private:
    uint32_t m_limit = 100;
    uint32_t m_k = 20;
    Ptr<Queue<Packet>> m_devQueue;

    bool DoEnqueue(Ptr<QueueDiscItem> item) override
    {
        uint32_t w = Waiting(); // the arriving packet is not counted yet
        if (w >= m_limit)
        {
            DropBeforeEnqueue(item, TAIL_DROP);
            return false;
        }
        if (w >= m_k)
        {
            Mark(item, STEP_MARK); // returns false (and counts nothing) for not-ECT packets
        }
        return GetInternalQueue(0)->Enqueue(item);
    }

    Ptr<QueueDiscItem> DoDequeue() override
    {
        return GetInternalQueue(0)->Dequeue();
    }

    bool CheckConfig() override
    {
        if (GetNQueueDiscClasses() > 0 || GetNPacketFilters() > 0)
        {
            return false;
        }
        if (GetNInternalQueues() == 0)
        {
            // Never the binding limit: DoEnqueue drops at w >= m_limit first.
            AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
                "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, m_limit + 1))));
        }
        return GetNInternalQueues() == 1;
    }

    void InitializeParams() override
    {
        NS_ABORT_MSG_UNLESS(m_devQueue, "TandemStepQueueDisc: device queue not set");
    }
};

NS_OBJECT_ENSURE_REGISTERED(TandemStepQueueDisc);

} // namespace tandem_bench

namespace
{

// ---------------------------------------------------------------------------------------------
// The spec
// ---------------------------------------------------------------------------------------------

enum class QueueKind
{
    None,
    Threshold,
    Red
};

const char*
KindName(QueueKind k)
{
    switch (k)
    {
    case QueueKind::None:
        return "none";
    case QueueKind::Threshold:
        return "threshold";
    case QueueKind::Red:
        return "red";
    }
    return "?";
}

struct NodeSpec
{
    std::string name;
    bool host = false;
    int line = 0;
    std::vector<size_t> links; // port i -> index into Spec::links
};

struct LinkSpec
{
    size_t a = 0, b = 0; // node indices
    uint64_t rateBps = 0;
    int64_t delayNs = 0;
    int line = 0;
};

struct QueueSpec
{
    size_t node = 0;
    uint32_t port = 0;
    uint32_t limit = 100;
    QueueKind kind = QueueKind::None;
    uint32_t k = 0;              // threshold
    double minTh = 0, maxTh = 0; // red, packets
    double maxP = 0, qw = 0;
    bool gentle = false, ecn = false;
    int line = 0; // 0 = default (not named by a queue line)
};

struct FlowSpec
{
    uint64_t id = 0;
    size_t src = 0, dst = 0;
    uint64_t bytes = 0;
    int64_t startNs = 0;
    int line = 0;
};

struct SampleSpec
{
    size_t node = 0;
    uint32_t port = 0;
    int line = 0;
};

/// `route SWITCH HOST PORT`: the switch sends everything toward the host out of that port (a
/// static host route, which ns-3's list routing consults before global routing). Tandem writes
/// one where a switch has equal-cost ports toward a host, with the port its
/// `switch.ecmp = "destination"` takes.
struct RouteSpec
{
    size_t node = 0, host = 0;
    uint32_t port = 0;
    int line = 0;
};

struct Spec
{
    std::string path;
    int64_t durationNs = -1;
    int64_t sampleIntervalNs = 100000; // 100 us
    uint32_t seed = 1;
    uint32_t hostQueue = 10000;
    TcpOptions tcp;
    double maxRto = 60.0;
    std::vector<NodeSpec> nodes;
    std::map<std::string, size_t> nodeIndex;
    std::vector<LinkSpec> links;
    std::map<std::pair<size_t, uint32_t>, QueueSpec> queues; // (switch, port) -> queue
    std::vector<FlowSpec> flows;
    std::vector<SampleSpec> samples;
    std::vector<RouteSpec> routes;
};

[[noreturn]] void
Fail(const std::string& path, int line, const std::string& msg)
{
    std::cerr << "scenario: " << path << ":" << line << ": " << msg << std::endl;
    std::exit(2);
}

/// Parses one spec file; any error exits with status 2 via Fail().
class SpecParser
{
  public:
    explicit SpecParser(std::string path)
    {
        m_spec.path = std::move(path);
        // Tandem's defaults where they differ from TcpOptions': NewReno is ns3::TcpLinuxReno
        // (Tandem's NewReno counts bytes in slow start).
        m_spec.tcp.linuxReno = true;
    }

    Spec Parse()
    {
        std::ifstream in(m_spec.path);
        if (!in)
        {
            std::cerr << "scenario: " << m_spec.path << ": cannot open: " << std::strerror(errno)
                      << std::endl;
            std::exit(2);
        }
        std::string raw;
        bool header = false;
        while (std::getline(in, raw))
        {
            ++m_line;
            std::string s = raw.substr(0, raw.find('#'));
            std::istringstream is(s);
            std::vector<std::string> f;
            for (std::string w; is >> w;)
            {
                f.push_back(w);
            }
            if (f.empty())
            {
                continue;
            }
            if (!header)
            {
                if (f[0] != "tandem-ns3-spec")
                {
                    Err("the first line must be `tandem-ns3-spec 1`");
                }
                Want(f, 2);
                if (f[1] != "1")
                {
                    Err("unsupported spec version '" + f[1] + "' (this program reads version 1)");
                }
                header = true;
                continue;
            }
            Directive(f);
        }
        if (!header)
        {
            Err("empty spec (the first line must be `tandem-ns3-spec 1`)");
        }
        Finish();
        return m_spec;
    }

  private:
    Spec m_spec;
    int m_line = 0;
    std::set<uint64_t> m_flowIds;
    std::set<std::string> m_tcpKeys;
    std::set<std::pair<size_t, size_t>> m_routed;
    int m_durationLine = 0;

    [[noreturn]] void Err(const std::string& msg) const
    {
        Fail(m_spec.path, m_line, msg);
    }

    void Want(const std::vector<std::string>& f, size_t n) const
    {
        if (f.size() != n)
        {
            std::ostringstream os;
            os << "`" << f[0] << "` takes " << n - 1 << " field" << (n == 2 ? "" : "s") << ", got "
               << f.size() - 1;
            Err(os.str());
        }
    }

    uint64_t U64(const std::string& s, const char* what) const
    {
        if (s.empty() || s[0] == '-' || s[0] == '+')
        {
            Err(std::string("bad ") + what + " '" + s + "' (a non-negative integer)");
        }
        errno = 0;
        char* end = nullptr;
        unsigned long long v = std::strtoull(s.c_str(), &end, 10);
        if (errno != 0 || *end != '\0')
        {
            // Allow an integral float such as 1e9 for rates.
            double d = Double(s, what);
            if (d != std::floor(d) || d > 1.8e19)
            {
                Err(std::string("bad ") + what + " '" + s + "' (a non-negative integer)");
            }
            return static_cast<uint64_t>(d);
        }
        return v;
    }

    uint32_t U32(const std::string& s, const char* what) const
    {
        uint64_t v = U64(s, what);
        if (v > 0xffffffffull)
        {
            Err(std::string(what) + " '" + s + "' out of range");
        }
        return static_cast<uint32_t>(v);
    }

    double Double(const std::string& s, const char* what) const
    {
        errno = 0;
        char* end = nullptr;
        double v = std::strtod(s.c_str(), &end);
        if (s.empty() || errno != 0 || *end != '\0' || !std::isfinite(v) || v < 0)
        {
            Err(std::string("bad ") + what + " '" + s + "' (a non-negative number)");
        }
        return v;
    }

    /// Seconds -> integer nanoseconds (ns-3's time resolution).
    int64_t Ns(const std::string& s, const char* what) const
    {
        double v = Double(s, what);
        if (v > 9.0e9)
        {
            Err(std::string(what) + " '" + s + "' too large");
        }
        return std::llround(v * 1e9);
    }

    bool Bool01(const std::string& s, const char* what) const
    {
        if (s == "0")
        {
            return false;
        }
        if (s == "1")
        {
            return true;
        }
        Err(std::string("bad ") + what + " '" + s + "' (0 or 1)");
    }

    size_t NodeRef(const std::string& name) const
    {
        auto it = m_spec.nodeIndex.find(name);
        if (it == m_spec.nodeIndex.end())
        {
            Err("unknown node '" + name + "' (declare it with a `node` line first)");
        }
        return it->second;
    }

    void Directive(const std::vector<std::string>& f)
    {
        const std::string& d = f[0];
        if (d == "tandem-ns3-spec")
        {
            Err("duplicate `tandem-ns3-spec` line");
        }
        else if (d == "duration")
        {
            Want(f, 2);
            m_spec.durationNs = Ns(f[1], "duration");
            if (m_spec.durationNs <= 0)
            {
                Err("duration must be > 0");
            }
            m_durationLine = m_line;
        }
        else if (d == "sample_interval")
        {
            Want(f, 2);
            m_spec.sampleIntervalNs = Ns(f[1], "sample_interval");
        }
        else if (d == "seed")
        {
            Want(f, 2);
            m_spec.seed = U32(f[1], "seed");
            if (m_spec.seed == 0)
            {
                Err("seed must be >= 1 (ns-3 RngSeedManager)");
            }
        }
        else if (d == "tcp")
        {
            Want(f, 3);
            Tcp(f[1], f[2]);
        }
        else if (d == "node")
        {
            Want(f, 3);
            if (m_spec.nodeIndex.count(f[1]))
            {
                Err("duplicate node '" + f[1] + "'");
            }
            if (f[2] != "host" && f[2] != "switch")
            {
                Err("node kind '" + f[2] + "' (host | switch)");
            }
            NodeSpec n;
            n.name = f[1];
            n.host = f[2] == "host";
            n.line = m_line;
            m_spec.nodeIndex[n.name] = m_spec.nodes.size();
            m_spec.nodes.push_back(n);
        }
        else if (d == "link")
        {
            Want(f, 5);
            LinkSpec l;
            l.a = NodeRef(f[1]);
            l.b = NodeRef(f[2]);
            if (l.a == l.b)
            {
                Err("a link needs two different nodes");
            }
            l.rateBps = U64(f[3], "rate (bit/s)");
            if (l.rateBps == 0)
            {
                Err("link rate must be > 0");
            }
            l.delayNs = Ns(f[4], "delay");
            l.line = m_line;
            size_t idx = m_spec.links.size();
            m_spec.links.push_back(l);
            m_spec.nodes[l.a].links.push_back(idx);
            m_spec.nodes[l.b].links.push_back(idx);
        }
        else if (d == "queue")
        {
            if (f.size() < 5)
            {
                Err("`queue NODE PORT LIMIT none|threshold K|red MIN MAX P QW GENTLE ECN`");
            }
            QueueSpec q;
            q.node = NodeRef(f[1]);
            if (m_spec.nodes[q.node].host)
            {
                Err("queue lines are for switch ports ('" + f[1] +
                    "' is a host; see host_queue)");
            }
            q.port = U32(f[2], "port");
            q.limit = U32(f[3], "limit");
            if (q.limit == 0)
            {
                Err("queue limit must be >= 1 packet");
            }
            q.line = m_line;
            const std::string& kind = f[4];
            if (kind == "none")
            {
                Want(f, 5);
                q.kind = QueueKind::None;
            }
            else if (kind == "threshold")
            {
                Want(f, 6);
                q.kind = QueueKind::Threshold;
                q.k = U32(f[5], "threshold K");
            }
            else if (kind == "red")
            {
                Want(f, 11);
                q.kind = QueueKind::Red;
                q.minTh = Double(f[5], "red min_th");
                q.maxTh = Double(f[6], "red max_th");
                q.maxP = Double(f[7], "red max_p");
                q.qw = Double(f[8], "red weight");
                q.gentle = Bool01(f[9], "red gentle");
                q.ecn = Bool01(f[10], "red ecn");
                if (q.minTh < 1 || q.maxTh < q.minTh)
                {
                    Err("red needs 1 <= min_th <= max_th");
                }
                if (q.maxP <= 0 || q.maxP > 1)
                {
                    Err("red max_p must be in (0, 1]");
                }
                if (q.qw <= 0 || q.qw > 1)
                {
                    Err("red weight must be in (0, 1]");
                }
                if (q.limit < 2)
                {
                    Err("a red queue needs limit >= 2 (queue disc MaxSize = limit - 1)");
                }
            }
            else
            {
                Err("queue kind '" + kind + "' (none | threshold | red)");
            }
            auto key = std::make_pair(q.node, q.port);
            if (m_spec.queues.count(key))
            {
                std::ostringstream os;
                os << "duplicate queue for " << f[1] << " port " << q.port << " (first on line "
                   << m_spec.queues[key].line << ")";
                Err(os.str());
            }
            m_spec.queues[key] = q;
        }
        else if (d == "host_queue")
        {
            Want(f, 2);
            m_spec.hostQueue = U32(f[1], "host_queue");
            if (m_spec.hostQueue == 0)
            {
                Err("host_queue must be >= 1");
            }
        }
        else if (d == "flow")
        {
            Want(f, 6);
            FlowSpec fl;
            fl.id = U64(f[1], "flow id");
            if (!m_flowIds.insert(fl.id).second)
            {
                Err("duplicate flow id " + f[1]);
            }
            if (fl.id > 55535)
            {
                Err("flow id must be <= 55535 (its sink listens on TCP port 10000 + id)");
            }
            fl.src = NodeRef(f[2]);
            fl.dst = NodeRef(f[3]);
            if (!m_spec.nodes[fl.src].host || !m_spec.nodes[fl.dst].host)
            {
                Err("flow endpoints must be hosts");
            }
            if (fl.src == fl.dst)
            {
                Err("flow source and destination are the same host");
            }
            fl.bytes = U64(f[4], "bytes");
            fl.startNs = Ns(f[5], "start time");
            fl.line = m_line;
            m_spec.flows.push_back(fl);
        }
        else if (d == "sample")
        {
            Want(f, 3);
            SampleSpec s;
            s.node = NodeRef(f[1]);
            s.port = U32(f[2], "port");
            s.line = m_line;
            m_spec.samples.push_back(s);
        }
        else if (d == "route")
        {
            Want(f, 4);
            RouteSpec r;
            r.node = NodeRef(f[1]);
            r.host = NodeRef(f[2]);
            r.port = U32(f[3], "port");
            r.line = m_line;
            if (m_spec.nodes[r.node].host || !m_spec.nodes[r.host].host)
            {
                Err("`route SWITCH HOST PORT` needs a switch and a host");
            }
            if (!m_routed.insert({r.node, r.host}).second)
            {
                Err("duplicate route from '" + f[1] + "' to '" + f[2] + "'");
            }
            m_spec.routes.push_back(r);
        }
        else
        {
            Err("unknown directive '" + d + "'");
        }
    }

    void Tcp(const std::string& key, const std::string& v)
    {
        TcpOptions& t = m_spec.tcp;
        if (!m_tcpKeys.insert(key).second)
        {
            Err("duplicate `tcp " + key + "`");
        }
        auto time = [&](const char* what) { return NanoSeconds(Ns(v, what)); };
        if (key == "cc")
        {
            if (v != "newreno" && v != "dctcp" && v != "cubic")
            {
                Err("tcp cc '" + v + "' (newreno | dctcp | cubic)");
            }
            t.cc = v;
        }
        else if (key == "mss")
        {
            t.mss = U32(v, "mss");
            if (t.mss == 0 || t.mss > 65535 - kMaxTcpIpHeader)
            {
                Err("mss must be in 1..65455 (an IP packet of at most 65,535 bytes)");
            }
        }
        else if (key == "init_cwnd")
        {
            t.initCwnd = U32(v, "init_cwnd");
        }
        else if (key == "min_rto")
        {
            t.minRto = time("min_rto");
        }
        else if (key == "init_rto")
        {
            t.initRto = time("init_rto");
        }
        else if (key == "max_rto")
        {
            m_spec.maxRto = Double(v, "max_rto");
        }
        else if (key == "delack_timeout")
        {
            Time to = time("delack_timeout");
            t.delayedAck = to.IsStrictlyPositive();
            if (t.delayedAck)
            {
                t.delAckTimeout = to;
            }
        }
        else if (key == "delack_count")
        {
            t.delAckCount = U32(v, "delack_count");
            if (t.delAckCount == 0)
            {
                Err("delack_count must be >= 1");
            }
        }
        else if (key == "sack")
        {
            t.sack = Bool01(v, "sack");
        }
        else if (key == "timestamps")
        {
            t.timestamps = Bool01(v, "timestamps");
        }
        else if (key == "window_scaling")
        {
            t.windowScaling = Bool01(v, "window_scaling");
        }
        else if (key == "limited_transmit")
        {
            t.limitedTransmit = Bool01(v, "limited_transmit");
        }
        else if (key == "rcv_buf")
        {
            t.bufBytes = U32(v, "rcv_buf");
        }
        else if (key == "dupack_threshold")
        {
            t.dupAckThreshold = U32(v, "dupack_threshold");
        }
        else if (key == "data_retries")
        {
            t.dataRetries = U32(v, "data_retries");
        }
        else if (key == "syn_retries")
        {
            // Retransmissions, as Tandem's `syn_retries`: ns-3's ConnCount is one more
            // (TcpOptions::synFirstCounted).
            t.synRetries = U32(v, "syn_retries");
            t.synFirstCounted = 1;
        }
        else if (key == "dctcp_g")
        {
            t.dctcpG = Double(v, "dctcp_g");
            if (t.dctcpG <= 0 || t.dctcpG > 1)
            {
                Err("dctcp_g must be in (0, 1]");
            }
        }
        else if (key == "dctcp_alpha_init")
        {
            t.dctcpAlphaInit = Double(v, "dctcp_alpha_init");
        }
        else if (key == "clock_granularity")
        {
            t.clockGranularity = time("clock_granularity");
        }
        else if (key == "recovery")
        {
            if (v != "classic" && v != "prr")
            {
                Err("tcp recovery '" + v + "' (classic | prr)");
            }
            t.recovery = v;
        }
        else if (key == "ecn")
        {
            t.ecn = Bool01(v, "ecn");
        }
        else if (key == "cubic_beta")
        {
            t.cubicBeta = Double(v, "cubic_beta");
            if (t.cubicBeta <= 0 || t.cubicBeta >= 1)
            {
                Err("cubic_beta must be in (0, 1)");
            }
        }
        else if (key == "cubic_c")
        {
            t.cubicC = Double(v, "cubic_c");
            if (t.cubicC <= 0)
            {
                Err("cubic_c must be positive");
            }
        }
        else if (key == "cubic_hystart")
        {
            t.cubicHystart = Bool01(v, "cubic_hystart");
        }
        else if (key == "cubic_fast_convergence")
        {
            t.cubicFastConvergence = Bool01(v, "cubic_fast_convergence");
        }
        else
        {
            Err("unknown tcp key '" + key + "'");
        }
    }

    /// Cross-line checks, reported at the offending line.
    /// Fails (at `line`) unless `node` has a port `port`.
    void CheckPort(size_t node, uint32_t port, int line)
    {
        if (port >= m_spec.nodes[node].links.size())
        {
            m_line = line;
            std::ostringstream os;
            os << "node '" << m_spec.nodes[node].name << "' has no port " << port << " ("
               << m_spec.nodes[node].links.size() << " links)";
            Err(os.str());
        }
    }

    void Finish()
    {
        if (m_spec.durationNs < 0)
        {
            Err("missing `duration` line (end of spec)");
        }
        for (auto& kv : m_spec.queues)
        {
            CheckPort(kv.second.node, kv.second.port, kv.second.line);
        }
        for (const SampleSpec& s : m_spec.samples)
        {
            CheckPort(s.node, s.port, s.line);
        }
        for (const RouteSpec& r : m_spec.routes)
        {
            CheckPort(r.node, r.port, r.line);
        }
        for (const FlowSpec& fl : m_spec.flows)
        {
            for (size_t n : {fl.src, fl.dst})
            {
                if (m_spec.nodes[n].links.empty())
                {
                    m_line = fl.line;
                    Err("host '" + m_spec.nodes[n].name + "' has no link");
                }
            }
        }
        // Default queues for every switch port not named by a queue line.
        for (size_t n = 0; n < m_spec.nodes.size(); ++n)
        {
            if (m_spec.nodes[n].host)
            {
                continue;
            }
            for (uint32_t p = 0; p < m_spec.nodes[n].links.size(); ++p)
            {
                auto key = std::make_pair(n, p);
                if (!m_spec.queues.count(key))
                {
                    QueueSpec q;
                    q.node = n;
                    q.port = p;
                    q.limit = 100;
                    q.kind = QueueKind::None;
                    q.line = 0;
                    m_spec.queues[key] = q;
                }
            }
        }
    }
};

// ---------------------------------------------------------------------------------------------
// Run-time state
// ---------------------------------------------------------------------------------------------

/// One switch egress port and its counters.
struct Port
{
    size_t node = 0;
    uint32_t port = 0;
    QueueSpec q;
    Ptr<NetDevice> dev;
    Ptr<Queue<Packet>> devQueue;
    Ptr<QueueDisc> qdisc; // null for `none`
    uint64_t tcDrops = 0; // traffic-control-layer drops attributed to this port (`none` ports)

    // Threshold-rule self-check (threshold ports): "Mark" sets the flag for the item being
    // enqueued, "Drop" clears it, "Enqueue" compares it with the rule.
    const QueueDiscItem* markedItem = nullptr;
    uint64_t ruleChecked = 0;
    uint64_t ruleViolations = 0;
    uint64_t limitViolations = 0;

    uint32_t Waiting() const
    {
        return devQueue->GetNPackets() + (qdisc ? qdisc->GetNPackets() : 0);
    }

    uint64_t Drops() const
    {
        uint64_t d = tcDrops + devQueue->GetTotalDroppedPackets();
        if (qdisc)
        {
            d += qdisc->GetStats().nTotalDroppedPackets;
        }
        return d;
    }

    uint64_t Marks() const
    {
        return qdisc ? qdisc->GetStats().nTotalMarkedPackets : 0;
    }

    static void OnMark(Port* p, Ptr<const QueueDiscItem> item, const char*)
    {
        p->markedItem = PeekPointer(item);
    }

    /// NS3_QTRACE diagnostics: one line per packet a switch port takes (Q) or drops (D), with
    /// the packets waiting before it, its CE mark (-1: no marking here), TCP flags, sequence
    /// and acknowledgment numbers. Compare with the same arrivals in Tandem packet by packet.
    static bool QTraced()
    {
        static const bool on = std::getenv("NS3_QTRACE") != nullptr;
        return on;
    }

    static void QTrace(const char* what, const Ipv4Header& ip, Ptr<const Packet> payload, int64_t w, int marked)
    {
        TcpHeader th;
        if (payload)
        {
            payload->PeekHeader(th);
        }
        std::cerr << Simulator::Now().GetNanoSeconds() << " " << what << " " << ip.GetSource() << ">"
                  << ip.GetDestination() << " len " << (payload ? payload->GetSize() : 0) << " waiting " << w
                  << " ce " << marked << " flags " << int(th.GetFlags()) << " seq "
                  << th.GetSequenceNumber().GetValue() << " ack " << th.GetAckNumber().GetValue()
                  << " ports " << th.GetSourcePort() << ">" << th.GetDestinationPort() << " win " << th.GetWindowSize();
        if (payload)
        {
            if (Ptr<const TcpOptionSack> sack = DynamicCast<const TcpOptionSack>(th.GetOption(TcpOption::SACK)))
            {
                std::cerr << " sack";
                for (const auto& b : sack->GetSackList())
                {
                    std::cerr << " " << b.first.GetValue() << "-" << b.second.GetValue();
                }
            }
        }
        std::cerr << std::endl;
    }

    /// A drop-tail port's device queue took a packet (NS3_QTRACE only).
    static void OnDevEnqueue(Port* p, Ptr<const Packet> pkt)
    {
        Ptr<Packet> c = pkt->Copy();
        PppHeader ppp;
        c->RemoveHeader(ppp);
        Ipv4Header ip;
        c->RemoveHeader(ip);
        QTrace("Q", ip, c, int64_t(p->devQueue->GetNPackets()) - 1, -1);
    }

    static void OnDrop(Port* p, Ptr<const QueueDiscItem> item)
    {
        if (QTraced())
        {
            if (Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item))
            {
                QTrace("D", ip->GetHeader(), ip->GetPacket(), -1, -1);
            }
        }
        p->markedItem = nullptr;
    }

    /// Fires after the item joined the queue disc: w on arrival = qdisc - 1 + device queue.
    static void OnEnqueue(Port* p, Ptr<const QueueDiscItem> item)
    {
        Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
        bool marked = p->markedItem == PeekPointer(item);
        p->markedItem = nullptr;
        if (!ip)
        {
            return;
        }
        uint32_t w = p->qdisc->GetNPackets() - 1 + p->devQueue->GetNPackets();
        if (QTraced())
        {
            QTrace("Q", ip->GetHeader(), ip->GetPacket(), w, marked);
        }
        if (p->q.kind != QueueKind::Threshold)
        {
            return; // a RED port, traced only
        }
        bool ect = ip->GetHeader().GetEcn() != Ipv4Header::ECN_NotECT;
        bool expect = ect && w >= p->q.k;
        p->ruleChecked++;
        if (marked != expect)
        {
            p->ruleViolations++;
        }
        if (w >= p->q.limit)
        {
            p->limitViolations++;
        }
    }
};

/// Traffic-control-layer drops of one node (see TcDropCounter in common.h: with no queue disc,
/// a full device queue is "stopped" and the traffic-control layer drops the packet, trace
/// TcDrop). On a switch the drop is attributed to the egress port the packet was routed to,
/// found by a route lookup on its IPv4 destination.
struct NodeDrops
{
    Ptr<Node> node;
    uint64_t total = 0;
    uint64_t unattributed = 0;
    std::map<uint32_t, Port*> portByIfIndex; // device ifindex -> port (switches)
    std::map<uint32_t, Port*> cache;         // IPv4 destination -> port

    static void OnDrop(NodeDrops* nd, Ptr<const Packet> p)
    {
        nd->total++;
        if (nd->portByIfIndex.empty())
        {
            return;
        }
        Ptr<Packet> c = p->Copy();
        uint8_t first = 0;
        if (c->GetSize() >= 20)
        {
            c->CopyData(&first, 1);
        }
        if ((first >> 4) != 4)
        {
            nd->unattributed++;
            return;
        }
        Ipv4Header ip;
        c->RemoveHeader(ip);
        uint32_t dst = ip.GetDestination().Get();
        auto it = nd->cache.find(dst);
        Port* port = nullptr;
        if (it != nd->cache.end())
        {
            port = it->second;
        }
        else
        {
            Ptr<Ipv4> ipv4 = nd->node->GetObject<Ipv4>();
            Ipv4Header h;
            h.SetDestination(ip.GetDestination());
            h.SetProtocol(ip.GetProtocol());
            Socket::SocketErrno err;
            Ptr<Ipv4Route> r =
                ipv4->GetRoutingProtocol()->RouteOutput(Create<Packet>(), h, nullptr, err);
            if (r && r->GetOutputDevice())
            {
                auto pi = nd->portByIfIndex.find(r->GetOutputDevice()->GetIfIndex());
                if (pi != nd->portByIfIndex.end())
                {
                    port = pi->second;
                }
            }
            nd->cache[dst] = port;
        }
        if (Port::QTraced())
        {
            Port::QTrace("D", ip, c, -1, -1);
        }
        if (port)
        {
            port->tcDrops++;
        }
        else
        {
            nd->unattributed++;
        }
    }
};

/// Per-flow receive state (the flow's own PacketSink).
struct FlowState
{
    FlowSpec spec;
    Ptr<PacketSink> sink;
    uint64_t rx = 0;
    Time end = Seconds(-1);
    std::unique_ptr<TcpMonitor> mon;
    std::vector<std::string> path; // egress "node:port" of every hop, source first

    static void OnRx(FlowState* f, Ptr<const Packet> p, const Address&)
    {
        f->rx += p->GetSize();
        if (f->spec.bytes > 0 && f->rx >= f->spec.bytes && f->end.IsNegative())
        {
            f->end = Simulator::Now();
        }
    }
};

void
Usage(const char* argv0)
{
    std::cerr << "usage: " << argv0 << " SPEC [--threshold-qdisc=step|red]\n"
              << "  Builds and runs the ns-3 scenario described by SPEC (format: README.md,\n"
              << "  section scenario.cc) and prints one JSON object on stdout.\n"
              << "  --threshold-qdisc=step (default): `threshold` ports use TandemStepQueueDisc\n"
              << "      (Tandem's rule, exact); red: dctcp.cc's RedQueueDisc step marker with\n"
              << "      MaxSize = limit - 1, MinTh = MaxTh = K - 1.\n";
}

} // namespace

int
main(int argc, char* argv[])
{
    std::string specPath;
    std::string thresholdQdisc = "step";
    for (int i = 1; i < argc; ++i)
    {
        std::string a = argv[i];
        if (a == "--help" || a == "-h")
        {
            Usage(argv[0]);
            return 0;
        }
        if (a.rfind("--threshold-qdisc=", 0) == 0)
        {
            thresholdQdisc = a.substr(std::strlen("--threshold-qdisc="));
            if (thresholdQdisc != "step" && thresholdQdisc != "red")
            {
                Usage(argv[0]);
                return 2;
            }
        }
        else if (a.rfind("--", 0) == 0 || !specPath.empty())
        {
            Usage(argv[0]);
            return 2;
        }
        else
        {
            specPath = a;
        }
    }
    if (specPath.empty())
    {
        Usage(argv[0]);
        return 2;
    }
    const bool redThreshold = thresholdQdisc == "red";

    Spec spec = SpecParser(specPath).Parse();
    std::vector<std::string> warnings;
    if (redThreshold)
    {
        for (auto& kv : spec.queues)
        {
            const QueueSpec& q = kv.second;
            if (q.kind == QueueKind::Threshold && (q.limit < 2 || q.k < 2))
            {
                Fail(spec.path, q.line,
                     "--threshold-qdisc=red needs limit >= 2 and K >= 2 (use the default step)");
            }
            if (q.kind == QueueKind::Threshold && q.k < 3)
            {
                warnings.push_back("threshold K < 3 with --threshold-qdisc=red: RED marks only "
                                   "when the queue disc holds > 1 packet");
            }
        }
    }
    if (std::fabs(spec.maxRto - 60.0) > 1e-9)
    {
        std::ostringstream os;
        os << "tcp max_rto " << spec.maxRto << " s ignored: ns-3 3.37 hard-codes 60 s";
        warnings.push_back(os.str());
        std::cerr << "scenario: warning: " << os.str() << std::endl;
    }

    RngSeedManager::SetSeed(spec.seed);
    RngSeedManager::SetRun(1);
    spec.tcp.Apply();
    const Time duration = NanoSeconds(spec.durationNs);
    const Time sampleInterval = NanoSeconds(spec.sampleIntervalNs);

    // ---- topology ---------------------------------------------------------------------------
    // ns-3 node i = spec node i (creation order as in the spec).
    NodeContainer all;
    all.Create(spec.nodes.size());
    auto queueOf = [&](size_t node, uint32_t port) -> const QueueSpec& {
        return spec.queues.at(std::make_pair(node, port));
    };
    // Device queue size at one end of a link: hosts host_queue; switch ports `limit` for
    // `none`, 1 under a queue disc.
    auto devQueueSize = [&](size_t node, uint32_t port) -> uint32_t {
        if (spec.nodes[node].host)
        {
            return spec.hostQueue;
        }
        const QueueSpec& q = queueOf(node, port);
        return q.kind == QueueKind::None ? q.limit : 1;
    };
    std::vector<std::vector<Ptr<NetDevice>>> portDev(spec.nodes.size());
    std::vector<NetDeviceContainer> linkDevs;
    for (size_t li = 0; li < spec.links.size(); ++li)
    {
        const LinkSpec& l = spec.links[li];
        uint32_t pa = static_cast<uint32_t>(portDev[l.a].size());
        uint32_t pb = static_cast<uint32_t>(portDev[l.b].size());
        NetDeviceContainer d = MakeLink(all.Get(l.a),
                                        all.Get(l.b),
                                        DataRate(l.rateBps),
                                        NanoSeconds(l.delayNs),
                                        devQueueSize(l.a, pa),
                                        devQueueSize(l.b, pb),
                                        LinkMtu(spec.tcp.mss));
        portDev[l.a].push_back(d.Get(0));
        portDev[l.b].push_back(d.Get(1));
        linkDevs.push_back(d);
    }

    InternetStackHelper stack;
    stack.Install(all);

    // One /30 per link: 10.0.0.0/30, 10.0.0.4/30, ...
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    for (auto& d : linkDevs)
    {
        addr.Assign(d);
        addr.NewNetwork();
    }
    // PITFALL: Assign() just installed FqCoDel on every device; remove it (see common.h), then
    // install the queue discs the spec asks for.
    RemoveAllQueueDiscs(all);

    std::vector<std::unique_ptr<Port>> ports; // every switch port, (node, port) order
    std::map<std::pair<size_t, uint32_t>, Port*> portIndex;
    for (auto& kv : spec.queues)
    {
        const QueueSpec& q = kv.second;
        std::unique_ptr<Port> p(new Port);
        p->node = q.node;
        p->port = q.port;
        p->q = q;
        p->dev = portDev[q.node][q.port];
        p->devQueue = DevQueue(p->dev);
        const LinkSpec& link = spec.links[spec.nodes[q.node].links[q.port]];
        if (q.kind == QueueKind::None && Port::QTraced())
        {
            p->devQueue->TraceConnectWithoutContext(
                "Enqueue", MakeBoundCallback(&Port::OnDevEnqueue, p.get()));
        }
        if (q.kind != QueueKind::None)
        {
            TrafficControlHelper tch;
            if (q.kind == QueueKind::Threshold && !redThreshold)
            {
                tch.SetRootQueueDisc("ns3::TandemStepQueueDisc",
                                     "LimitPackets", UintegerValue(q.limit),
                                     "ThresholdPackets", UintegerValue(q.k));
            }
            else
            {
                bool thr = q.kind == QueueKind::Threshold;
                // Thresholds count the queue disc only, i.e. w - 1 whenever the queue disc is
                // not empty (the device slot below it is then full): shift them by one.
                tch.SetRootQueueDisc(
                    "ns3::RedQueueDisc",
                    "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, q.limit - 1)),
                    "MinTh", DoubleValue(thr ? q.k - 1.0 : q.minTh - 1.0),
                    "MaxTh", DoubleValue(thr ? q.k - 1.0 : q.maxTh - 1.0),
                    "QW", DoubleValue(thr ? 1.0 : q.qw),
                    "LInterm", DoubleValue(thr ? 50.0 : 1.0 / q.maxP),
                    "Gentle", BooleanValue(thr ? false : q.gentle),
                    "UseEcn", BooleanValue(thr ? true : q.ecn),
                    // Step marker: its "forced" region must mark. RED proper keeps ns-3's
                    // defaults, as Tandem's RED mirrors them: forced drops always drop
                    // (UseHardDrop) and early ones wait ~1/pb packets after the last (Wait).
                    "UseHardDrop", BooleanValue(!thr),
                    "Wait", BooleanValue(true),
                    "MeanPktSize", UintegerValue(1500),
                    "LinkBandwidth", DataRateValue(DataRate(link.rateBps)),
                    "LinkDelay", TimeValue(NanoSeconds(link.delayNs)));
            }
            p->qdisc = tch.Install(p->dev).Get(0);
            if (Ptr<RedQueueDisc> red = DynamicCast<RedQueueDisc>(p->qdisc))
            {
                // A random stream of the port's own, numbered as Tandem's like-for-like mode
                // numbers it (`ns3_red_stream`: node << 16 | port, ns-3 stream 2^63 + that,
                // run 1), so both draw the same numbers for RED's early drops.
                red->AssignStreams((int64_t(q.node) << 16) | int64_t(q.port));
            }
            if (Ptr<TandemStepQueueDisc> s = DynamicCast<TandemStepQueueDisc>(p->qdisc))
            {
                s->SetDeviceQueue(p->devQueue);
            }
            if (q.kind == QueueKind::Threshold || (q.kind == QueueKind::Red && Port::QTraced()))
            {
                Port* raw = p.get();
                bool ok = p->qdisc->TraceConnectWithoutContext(
                    "Mark", MakeBoundCallback(&Port::OnMark, raw));
                ok = ok && p->qdisc->TraceConnectWithoutContext(
                               "Drop", MakeBoundCallback(&Port::OnDrop, raw));
                ok = ok && p->qdisc->TraceConnectWithoutContext(
                               "Enqueue", MakeBoundCallback(&Port::OnEnqueue, raw));
                NS_ABORT_MSG_UNLESS(ok, "queue disc trace sources Mark/Drop/Enqueue not found");
            }
        }
        portIndex[kv.first] = p.get();
        ports.push_back(std::move(p));
    }

    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    // The spec's routes: a host route on the switch, through the port's interface to the
    // neighbour at its far end. Ipv4ListRouting asks static routing (priority 0) before
    // global routing (-10), so these override global routing's choice among equal-cost paths.
    {
        Ipv4StaticRoutingHelper staticHelper;
        auto addressOn = [&](size_t n, const Ptr<NetDevice>& dev) {
            Ptr<Ipv4> ipv4 = all.Get(n)->GetObject<Ipv4>();
            return ipv4->GetAddress(ipv4->GetInterfaceForDevice(dev), 0).GetLocal();
        };
        for (const RouteSpec& r : spec.routes)
        {
            Ptr<Ipv4> ipv4 = all.Get(r.node)->GetObject<Ipv4>();
            Ptr<NetDevice> dev = portDev[r.node][r.port];
            const LinkSpec& l = spec.links[spec.nodes[r.node].links[r.port]];
            size_t peer = l.a == r.node ? l.b : l.a;
            size_t peerPort = 0;
            while (spec.nodes[peer].links[peerPort] != spec.nodes[r.node].links[r.port])
            {
                ++peerPort;
            }
            Ipv4Address host = addressOn(r.host, portDev[r.host][0]);
            Ipv4Address next = addressOn(peer, portDev[peer][peerPort]);
            staticHelper.GetStaticRouting(ipv4)->AddHostRouteTo(
                host, next, static_cast<uint32_t>(ipv4->GetInterfaceForDevice(dev)));
        }
    }

    // ---- drop accounting --------------------------------------------------------------------
    std::vector<std::unique_ptr<NodeDrops>> nodeDrops;
    for (size_t n = 0; n < spec.nodes.size(); ++n)
    {
        std::unique_ptr<NodeDrops> nd(new NodeDrops);
        nd->node = all.Get(n);
        if (!spec.nodes[n].host)
        {
            for (uint32_t p = 0; p < portDev[n].size(); ++p)
            {
                nd->portByIfIndex[portDev[n][p]->GetIfIndex()] = portIndex.at({n, p});
            }
        }
        Ptr<TrafficControlLayer> tc = all.Get(n)->GetObject<TrafficControlLayer>();
        bool ok = tc->TraceConnectWithoutContext(
            "TcDrop", MakeBoundCallback(&NodeDrops::OnDrop, nd.get()));
        NS_ABORT_MSG_UNLESS(ok, "TrafficControlLayer has no TcDrop trace source");
        nodeDrops.push_back(std::move(nd));
    }

    // ---- applications -----------------------------------------------------------------------
    auto hostAddress = [&](size_t n) {
        Ptr<Ipv4> ipv4 = all.Get(n)->GetObject<Ipv4>();
        int32_t itf = ipv4->GetInterfaceForDevice(portDev[n][0]);
        return ipv4->GetAddress(itf, 0).GetLocal();
    };
    std::vector<std::unique_ptr<FlowState>> flows;
    // Sinks first (all at t = 0), then the senders, both in spec order.
    for (const FlowSpec& fs : spec.flows)
    {
        std::unique_ptr<FlowState> f(new FlowState);
        f->spec = fs;
        uint16_t port = static_cast<uint16_t>(10000 + fs.id);
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory", AnyAddress(port));
        ApplicationContainer a = sinkHelper.Install(all.Get(fs.dst));
        a.Start(Seconds(0));
        f->sink = DynamicCast<PacketSink>(a.Get(0));
        f->sink->TraceConnectWithoutContext("Rx", MakeBoundCallback(&FlowState::OnRx, f.get()));
        flows.push_back(std::move(f));
    }
    for (auto& f : flows)
    {
        const FlowSpec& fs = f->spec;
        Ipv4Address dst = hostAddress(fs.dst);
        // Each destination has one path (a spec's `route` lines pick among equal-cost ones).
        // Walk the routing tables hop by hop (a single-link host has a default route, so
        // looking at the source alone proves nothing) and record the egress ports,
        // "node:port", for the JSON.
        {
            size_t at = fs.src;
            Ipv4Header h;
            h.SetDestination(dst);
            while (at != fs.dst)
            {
                Ptr<Ipv4> ipv4 = all.Get(at)->GetObject<Ipv4>();
                Socket::SocketErrno err;
                Ptr<Ipv4Route> r =
                    ipv4->GetRoutingProtocol()->RouteOutput(Create<Packet>(), h, nullptr, err);
                int port = -1;
                for (size_t i = 0; r && i < portDev[at].size(); ++i)
                {
                    if (portDev[at][i] == r->GetOutputDevice())
                    {
                        port = static_cast<int>(i);
                    }
                }
                if (port < 0 || f->path.size() > spec.nodes.size())
                {
                    Fail(spec.path, fs.line,
                         "no route from '" + spec.nodes[fs.src].name + "' to '" +
                             spec.nodes[fs.dst].name + "' (stuck at '" + spec.nodes[at].name +
                             "')");
                }
                f->path.push_back(spec.nodes[at].name + ":" + std::to_string(port));
                const LinkSpec& l = spec.links[spec.nodes[at].links[port]];
                at = l.a == at ? l.b : l.a;
            }
        }
        BulkSendHelper bulk("ns3::TcpSocketFactory",
                            InetSocketAddress(dst, static_cast<uint16_t>(10000 + fs.id)));
        bulk.SetAttribute("MaxBytes", UintegerValue(fs.bytes)); // 0 = unlimited
        bulk.SetAttribute("SendSize", UintegerValue(65536));
        ApplicationContainer a = bulk.Install(all.Get(fs.src));
        Time start = NanoSeconds(fs.startNs);
        a.Start(start);
        f->mon.reset(new TcpMonitor);
        f->mon->AttachAfterStart(DynamicCast<BulkSendApplication>(a.Get(0)), start);
    }

    // ---- instrumentation --------------------------------------------------------------------
    struct Sampled
    {
        Port* port;
        std::unique_ptr<TxCounter> tx;
        std::unique_ptr<Sampler> sampler;
    };
    std::vector<Sampled> sampled;
    for (const SampleSpec& s : spec.samples)
    {
        Sampled x;
        if (spec.nodes[s.node].host)
        {
            // A host NIC: no Port record; make a temporary one for the counters.
            std::unique_ptr<Port> p(new Port);
            p->node = s.node;
            p->port = s.port;
            p->q.limit = spec.hostQueue;
            p->dev = portDev[s.node][s.port];
            p->devQueue = DevQueue(p->dev);
            x.port = p.get();
            ports.push_back(std::move(p));
        }
        else
        {
            x.port = portIndex.at({s.node, s.port});
        }
        Port* p = x.port;
        x.tx.reset(new TxCounter(p->dev));
        x.sampler.reset(new Sampler([p]() { return static_cast<double>(p->Waiting()); },
                                    Seconds(0), sampleInterval, duration));
        sampled.push_back(std::move(x));
    }

    // Diagnostics: NS3_LOG_LATE="Comp1|Comp2" with NS3_LOG_FROM=SECONDS turns those log
    // components on (every level, every prefix) only from that simulated time, so a trace of
    // the last milliseconds of a long run does not pay for formatting all of it (NS_LOG would).
    if (const char* late = std::getenv("NS3_LOG_LATE"))
    {
        const char* from = std::getenv("NS3_LOG_FROM");
        std::string names = late;
        Simulator::Schedule(Seconds(from ? std::atof(from) : 0.0), [names]() {
            std::stringstream ss(names);
            std::string name;
            while (std::getline(ss, name, '|'))
            {
                LogComponentEnable(name.c_str(), LogLevel(LOG_LEVEL_ALL | LOG_PREFIX_ALL));
            }
        });
    }

    Simulator::Stop(duration);
    double wall = RunTimed();
    uint64_t events = Simulator::GetEventCount();

    // ---- results ----------------------------------------------------------------------------
    std::sort(flows.begin(), flows.end(), [](const std::unique_ptr<FlowState>& a,
                                             const std::unique_ptr<FlowState>& b) {
        return a->spec.id < b->spec.id;
    });
    std::vector<Json> flowJson;
    for (auto& f : flows)
    {
        const FlowSpec& fs = f->spec;
        Json j;
        j.UInt("id", fs.id)
            .Str("src", spec.nodes[fs.src].name)
            .Str("dst", spec.nodes[fs.dst].name)
            .UInt("bytes", fs.bytes)
            .Num("start_s", NanoSeconds(fs.startNs).GetSeconds());
        if (f->end.IsNegative())
        {
            j.Null("end_s").Null("fct_s");
        }
        else
        {
            j.Num("end_s", f->end.GetSeconds())
                .Num("fct_s", (f->end - NanoSeconds(fs.startNs)).GetSeconds());
        }
        j.UInt("rx_bytes", f->sink->GetTotalRx())
            .UInt("retransmits", f->mon->retransmits)
            .UInt("timeouts", f->mon->timeouts)
            .StrArray("path", f->path)
            .Obj("tcp_stats", f->mon->ToJson());
        flowJson.push_back(j);
    }

    std::vector<Json> portJson;
    for (auto& x : sampled)
    {
        Port* p = x.port;
        const std::vector<double>& s = x.sampler->samples;
        bool host = spec.nodes[p->node].host;
        Json j;
        j.Str("node", spec.nodes[p->node].name)
            .UInt("port", p->port)
            .Str("kind", host ? "host" : KindName(p->q.kind))
            .UInt("limit_pkts", p->q.limit);
        if (!host && p->q.kind == QueueKind::Threshold)
        {
            j.UInt("k_pkts", p->q.k);
        }
        uint64_t drops = p->Drops();
        if (host)
        {
            // Host NICs have no port attribution: the node's traffic-control drops.
            drops = nodeDrops[p->node]->total + p->devQueue->GetTotalDroppedPackets();
        }
        j.UInt("drops", drops)
            .UInt("marks", p->Marks())
            .UInt("tx_packets", x.tx->packets)
            .UInt("tx_bytes_incl_ppp", x.tx->bytes)
            .UInt("queue_samples", s.size())
            .Num("queue_mean_pkts", Mean(s))
            .Num("queue_p99_pkts", Percentile(s, 99))
            .Num("queue_max_pkts", Max(s))
            .UInt("queue_full_run_max_samples", LongestRunAtLeast(s, p->q.limit - 1.0));
        if (!host && p->q.kind == QueueKind::Threshold)
        {
            j.UInt("marking_rule_checked", p->ruleChecked)
                .UInt("marking_rule_violations", p->ruleViolations + p->limitViolations);
        }
        if (p->qdisc)
        {
            Json reasons;
            for (auto& r : p->qdisc->GetStats().nDroppedPacketsBeforeEnqueue)
            {
                reasons.UInt(r.first, r.second);
            }
            for (auto& r : p->qdisc->GetStats().nDroppedPacketsAfterDequeue)
            {
                reasons.UInt(r.first, r.second);
            }
            j.Obj("qdisc_drop_reasons", reasons);
        }
        portJson.push_back(j);
    }

    uint64_t switchDrops = 0, hostDrops = 0, marksTotal = 0, ruleChecked = 0, ruleViolations = 0;
    uint64_t unattributed = 0; // switch TcDrops with no egress port found (expected 0)
    for (size_t n = 0; n < spec.nodes.size(); ++n)
    {
        if (spec.nodes[n].host)
        {
            hostDrops += nodeDrops[n]->total;
            for (auto& d : portDev[n])
            {
                hostDrops += DevQueueDrops(d);
            }
        }
        else
        {
            // TcDrop (attributed or not) + device queue drops + queue disc drops.
            switchDrops += nodeDrops[n]->total;
            unattributed += nodeDrops[n]->unattributed;
        }
    }
    for (auto& p : ports)
    {
        if (spec.nodes[p->node].host)
        {
            continue; // sampled host NIC, counted above
        }
        switchDrops += p->devQueue->GetTotalDroppedPackets();
        if (p->qdisc)
        {
            switchDrops += p->qdisc->GetStats().nTotalDroppedPackets;
        }
        marksTotal += p->Marks();
        ruleChecked += p->ruleChecked;
        ruleViolations += p->ruleViolations + p->limitViolations;
    }

    Json out;
    out.Str("program", "scenario");
    AddVersion(out);
    out.Str("spec", spec.path)
        .Num("duration_s", duration.GetSeconds())
        .ObjArray("flows", flowJson)
        .ObjArray("ports", portJson)
        .UInt("switch_drops_total", switchDrops)
        .UInt("switch_drops_unattributed", unattributed)
        .UInt("host_drops", hostDrops)
        .UInt("marks_total", marksTotal)
        .UInt("marking_rule_checked", ruleChecked)
        .UInt("marking_rule_violations", ruleViolations)
        .Str("threshold_qdisc",
             redThreshold ? "RedQueueDisc(MaxSize=limit-1, MinTh=MaxTh=K-1, QW=1, not gentle)"
                          : "TandemStepQueueDisc(w>=limit drops, ECT and w>=K marks)")
        .UInt("nodes", spec.nodes.size())
        .UInt("links", spec.links.size())
        .UInt("framing_overhead_bytes", 2)
        .Num("sample_interval_s", sampleInterval.GetSeconds())
        .UInt("seed", spec.seed)
        .UInt("host_queue_pkts", spec.hostQueue)
        .Obj("tcp", spec.tcp.ToJson())
        .StrArray("warnings", warnings)
        .Num("wall_s", wall)
        .UInt("events", events)
        .Num("events_per_wall_s", wall > 0 ? events / wall : 0.0);

    Simulator::Destroy();
    std::cout << out.ToString() << std::endl;
    return 0;
}
