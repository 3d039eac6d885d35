// Shared helpers for the ns-3 side of Tandem's simulator validation (bench/ns3).
//
// Written against ns-3 3.37 as packaged by Debian bookworm (libns3-dev). Everything that the
// programs (bulk.cc, incast.cc, dctcp.cc, and the spec-driven scenario.cc) have in common lives
// here:
//
//   * TcpOptions      : the TCP command-line options and how they map onto ns-3 attributes,
//                       including the ns-3 defaults that differ from Linux / from Tandem.
//   * TcpMonitor      : per-socket retransmission / timeout accounting from TcpSocketBase traces.
//   * Sampler         : periodic queue-length sampling.
//   * Json            : a tiny JSON object writer (the programs print exactly one object).
//   * link / queue helpers: point-to-point links with a DropTail device queue and NO queue disc.
//
// Conventions used throughout:
//   * All programs print ONE line of JSON on stdout and nothing else; diagnostics go to stderr.
//   * Times in the JSON are in seconds (floating point) unless the key ends in _ns / _us / _ms.
//   * Rates are in bits per second; sizes in bytes unless the key ends in _pkts.
//   * Percentiles use the nearest-rank definition: p-th percentile of n sorted values is the
//     value at 1-based rank ceil(p/100 * n) (so p99 of 100 values is the 99th smallest).

#ifndef TANDEM_BENCH_NS3_COMMON_H
#define TANDEM_BENCH_NS3_COMMON_H

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace tandem_bench
{

using namespace ns3;

// ---------------------------------------------------------------------------------------------
// Small statistics helpers
// ---------------------------------------------------------------------------------------------

/// Arithmetic mean (0 for an empty set).
inline double
Mean(const std::vector<double>& v)
{
    if (v.empty())
    {
        return 0.0;
    }
    double s = 0.0;
    for (double x : v)
    {
        s += x;
    }
    return s / static_cast<double>(v.size());
}

/// Nearest-rank percentile: the value at 1-based rank ceil(p/100 * n) of the sorted values.
/// p = 100 gives the maximum, p = 50 the lower median. 0 for an empty set.
inline double
Percentile(std::vector<double> v, double p)
{
    if (v.empty())
    {
        return 0.0;
    }
    std::sort(v.begin(), v.end());
    double rank = std::ceil(p / 100.0 * static_cast<double>(v.size()));
    size_t idx = rank < 1.0 ? 0 : static_cast<size_t>(rank) - 1;
    if (idx >= v.size())
    {
        idx = v.size() - 1;
    }
    return v[idx];
}

inline double
Max(const std::vector<double>& v)
{
    return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
}

// The longest run of consecutive samples at or above `level` (a queue held full: drop-tail
// lock-out episodes, where one input takes every freed slot).
inline uint64_t
LongestRunAtLeast(const std::vector<double>& v, double level)
{
    uint64_t best = 0, cur = 0;
    for (double x : v)
    {
        cur = x >= level ? cur + 1 : 0;
        best = std::max(best, cur);
    }
    return best;
}

// ---------------------------------------------------------------------------------------------
// JSON writer: an ordered list of key -> already-serialised value.
// ---------------------------------------------------------------------------------------------

class Json
{
  public:
    Json& Num(const std::string& k, double v)
    {
        std::ostringstream os;
        if (std::isfinite(v))
        {
            os << std::setprecision(12) << v;
        }
        else
        {
            os << "null";
        }
        m_items.emplace_back(k, os.str());
        return *this;
    }

    Json& Int(const std::string& k, int64_t v)
    {
        m_items.emplace_back(k, std::to_string(v));
        return *this;
    }

    Json& UInt(const std::string& k, uint64_t v)
    {
        m_items.emplace_back(k, std::to_string(v));
        return *this;
    }

    Json& Bool(const std::string& k, bool v)
    {
        m_items.emplace_back(k, v ? "true" : "false");
        return *this;
    }

    Json& Str(const std::string& k, const std::string& v)
    {
        m_items.emplace_back(k, Quote(v));
        return *this;
    }

    Json& Obj(const std::string& k, const Json& v)
    {
        m_items.emplace_back(k, v.ToString());
        return *this;
    }

    Json& NumArray(const std::string& k, const std::vector<double>& v)
    {
        std::ostringstream os;
        os << "[";
        for (size_t i = 0; i < v.size(); ++i)
        {
            os << (i ? "," : "") << std::setprecision(12) << v[i];
        }
        os << "]";
        m_items.emplace_back(k, os.str());
        return *this;
    }

    /// An array of objects (added for scenario.cc).
    Json& ObjArray(const std::string& k, const std::vector<Json>& v)
    {
        std::ostringstream os;
        os << "[";
        for (size_t i = 0; i < v.size(); ++i)
        {
            os << (i ? "," : "") << v[i].ToString();
        }
        os << "]";
        m_items.emplace_back(k, os.str());
        return *this;
    }

    /// An array of strings (added for scenario.cc).
    Json& StrArray(const std::string& k, const std::vector<std::string>& v)
    {
        std::ostringstream os;
        os << "[";
        for (size_t i = 0; i < v.size(); ++i)
        {
            os << (i ? "," : "") << Quote(v[i]);
        }
        os << "]";
        m_items.emplace_back(k, os.str());
        return *this;
    }

    /// JSON null.
    Json& Null(const std::string& k)
    {
        m_items.emplace_back(k, "null");
        return *this;
    }

    std::string ToString() const
    {
        std::ostringstream os;
        os << "{";
        for (size_t i = 0; i < m_items.size(); ++i)
        {
            os << (i ? "," : "") << Quote(m_items[i].first) << ":" << m_items[i].second;
        }
        os << "}";
        return os.str();
    }

    static std::string Quote(const std::string& s)
    {
        std::string out = "\"";
        for (char c : s)
        {
            switch (c)
            {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20)
                {
                    char buf[8];
                    std::snprintf(buf, sizeof(buf), "\\u%04x", c);
                    out += buf;
                }
                else
                {
                    out += c;
                }
            }
        }
        out += "\"";
        return out;
    }

  private:
    std::vector<std::pair<std::string, std::string>> m_items;
};

// ---------------------------------------------------------------------------------------------
// TCP configuration
// ---------------------------------------------------------------------------------------------

/// Every TCP knob the programs expose. Defaults are Linux-like (and equal to Tandem's
/// TcpConfig::default() where Tandem has the knob), NOT ns-3's own defaults; the comments in
/// Apply() say what ns-3 would have used.
struct TcpOptions
{
    std::string cc = "newreno";   // newreno | dctcp | cubic
    bool linuxReno = false;       // with cc=newreno: use ns3::TcpLinuxReno instead of TcpNewReno
    std::string recovery = "classic"; // classic (RFC 6675-style, cwnd = ssthresh) | prr (RFC 6937)
    uint32_t mss = 1448;          // payload bytes per full segment
    uint32_t initCwnd = 10;       // initial cwnd, segments
    Time minRto = MilliSeconds(200);
    Time initRto = Seconds(1);    // SYN / SYN-ACK timeout (ns-3: TcpSocket::ConnTimeout)
    Time clockGranularity = MilliSeconds(1); // ns-3 RTO clock granularity G (RFC 6298)
    bool delayedAck = true;       // false -> ACK every segment (DelAckCount = 1)
    uint32_t delAckCount = 2;     // segments per delayed ACK when delayedAck
    Time delAckTimeout = MilliSeconds(40);
    bool sack = true;
    bool timestamps = true;
    bool windowScaling = true;
    bool limitedTransmit = true;  // RFC 3042
    uint32_t dupAckThreshold = 3; // ns-3: TcpSocketBase::ReTxThreshold
    uint32_t bufBytes = 6u << 20; // SndBufSize and RcvBufSize
    uint32_t synRetries = 6;      // ns-3: TcpSocket::ConnCount (less synFirstCounted)
    // ConnCount counts SYN (and SYN-ACK) transmissions, the first included: ConnCount = 2 is
    // one SYN and one retransmission. scenario.cc's spec gives Tandem's `syn_retries`
    // (retransmissions, as Linux's tcp_syn_retries) and sets this to 1, so that ConnCount is
    // syn_retries + 1 and both tools send as many SYNs before giving up; the fixed programs'
    // --syn-retries is ConnCount itself (0).
    uint32_t synFirstCounted = 0;
    uint32_t dataRetries = 15;    // ns-3: TcpSocket::DataRetries (ns-3 default 6, Linux 15)
    double dctcpG = 0.0625;       // DCTCP EWMA gain g (ns-3 TcpDctcp::DctcpShiftG)
    double dctcpAlphaInit = 1.0;  // DCTCP initial alpha (ns-3 and Linux default 1.0)
    double cubicBeta = 0.7;       // ns-3 TcpCubic::Beta (its default)
    double cubicC = 0.4;          // ns-3 TcpCubic::C (its default)
    bool cubicHystart = true;     // ns-3 TcpCubic::HyStart (its default)
    bool cubicFastConvergence = true; // ns-3 TcpCubic::FastConvergence (its default)
    bool ecn = false;             // ECN for non-DCTCP senders (scenario.cc's `tcp ecn 1`; no
                                  // command-line option: the fixed programs never set it)

    void Register(CommandLine& cmd)
    {
        cmd.AddValue("cc", "congestion control: newreno | dctcp | cubic", cc);
        cmd.AddValue("linux-reno",
                     "with --cc=newreno use ns3::TcpLinuxReno (Linux-style slow start / CA "
                     "counting acked segments) instead of ns3::TcpNewReno",
                     linuxReno);
        cmd.AddValue("recovery", "loss recovery: classic | prr", recovery);
        cmd.AddValue("mss", "TCP segment size (payload bytes)", mss);
        cmd.AddValue("init-cwnd", "initial congestion window (segments)", initCwnd);
        cmd.AddValue("min-rto", "minimum RTO (e.g. 200ms)", minRto);
        cmd.AddValue("init-rto", "SYN/SYN-ACK retransmission timeout (e.g. 1s)", initRto);
        cmd.AddValue("clock-granularity", "RTO clock granularity G of RFC 6298", clockGranularity);
        cmd.AddValue("delayed-ack", "delayed ACKs on (1) or ACK every segment (0)", delayedAck);
        cmd.AddValue("del-ack-count", "segments per delayed ACK", delAckCount);
        cmd.AddValue("del-ack-timeout", "delayed ACK timer", delAckTimeout);
        cmd.AddValue("sack", "SACK option", sack);
        cmd.AddValue("timestamps", "timestamp option", timestamps);
        cmd.AddValue("window-scaling", "window scale option", windowScaling);
        cmd.AddValue("limited-transmit", "RFC 3042 limited transmit", limitedTransmit);
        cmd.AddValue("dupack-threshold", "duplicate ACKs that trigger fast retransmit",
                     dupAckThreshold);
        cmd.AddValue("buf", "socket send and receive buffer (bytes)", bufBytes);
        cmd.AddValue("syn-retries", "SYN transmissions before the connection fails", synRetries);
        cmd.AddValue("data-retries", "data retransmissions before the connection fails",
                     dataRetries);
        cmd.AddValue("dctcp-g", "DCTCP alpha EWMA gain g", dctcpG);
        cmd.AddValue("dctcp-alpha-init", "DCTCP initial alpha", dctcpAlphaInit);
    }

    /// The congestion-control TypeId actually installed.
    TypeId CcTypeId() const
    {
        if (cc == "newreno")
        {
            return linuxReno ? TcpLinuxReno::GetTypeId() : TcpNewReno::GetTypeId();
        }
        if (cc == "dctcp")
        {
            return TcpDctcp::GetTypeId();
        }
        if (cc == "cubic")
        {
            return TcpCubic::GetTypeId();
        }
        NS_ABORT_MSG("unknown --cc=" << cc << " (newreno | dctcp | cubic)");
        return TypeId();
    }

    /// Sets every ns-3 default that matters. Must run before any socket is created.
    void Apply() const
    {
        // PITFALL: ns-3 3.37's TcpL4Protocol::SocketType defaults to ns3::TcpCubic. We always
        // set it explicitly. ns3::TcpNewReno grows cwnd by ONE MSS per ACK in slow start (no
        // RFC 3465 byte counting, so with delayed ACKs slow start is ~1.5x per RTT) and by
        // MSS*MSS/cwnd per ACK in congestion avoidance; ns3::TcpLinuxReno grows by the number
        // of segments the ACK covers (as Linux's tcp_slow_start) and counts acked segments in
        // CA (tcp_cong_avoid_ai). ns3::TcpDctcp derives from TcpLinuxReno.
        Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(CcTypeId()));

        // ns-3 3.37's TcpL4Protocol::RecoveryType defaults to TcpPrrRecovery (RFC 6937).
        // "classic" = ns3::TcpClassicRecovery: on entering fast recovery cwnd = ssthresh and
        // the RFC 6675 SACK scoreboard/pipe decides what to send (with SACK on).
        if (recovery == "classic")
        {
            Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                               TypeIdValue(TcpClassicRecovery::GetTypeId()));
        }
        else if (recovery == "prr")
        {
            Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                               TypeIdValue(TcpPrrRecovery::GetTypeId()));
        }
        else
        {
            NS_ABORT_MSG("unknown --recovery=" << recovery << " (classic | prr)");
        }

        // Segment size: ns-3 default is 536. ns-3 sends exactly SegmentSize payload bytes per
        // full segment and adds the options ON TOP (it does not subtract them), so with
        // timestamps a full data packet is 1448 + 20 (TCP) + 12 (TS option incl. 2 NOP pad)
        // + 20 (IP) = 1500 bytes of IP packet.
        Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
        Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initCwnd));
        // InitialSlowStartThreshold is left at its default (UINT32_MAX): slow start until loss.

        // Buffers: ns-3 default is 128 KiB each, which would cap the window well below the
        // BDP + buffer; 6 MiB (Linux's tcp_rmem max) makes the window never limit.
        Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(bufBytes));
        Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(bufBytes));

        // Delayed ACK: ns-3 default DelAckTimeout is 200 ms; Linux's minimum is 40 ms.
        // DelAckCount = 1 means every segment is ACKed at once (no delayed ACK).
        Config::SetDefault("ns3::TcpSocket::DelAckCount",
                           UintegerValue(delayedAck ? delAckCount : 1));
        Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(delAckTimeout));

        // Nagle off (ns-3 default; BulkSend writes big chunks anyway).
        Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(true));

        // PITFALL: ConnTimeout (the SYN / SYN-ACK timeout, doubled on every retry) defaults to
        // 3 s in ns-3; RFC 6298 / Linux use 1 s. ConnCount = SYN transmissions allowed.
        Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(initRto));
        Config::SetDefault("ns3::TcpSocket::ConnCount", UintegerValue(synRetries + synFirstCounted));
        Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(dataRetries));
        // Note: the RTT estimator's InitialEstimation (ns3::RttEstimator, 1 s) is left alone:
        // the RTO for data is only computed after the handshake, which always yields an RTT
        // sample (timestamps on, or Karn-valid SYN-ACK), so it never matters here.

        // PITFALL: MinRto defaults to 1 s in ns-3; Linux uses 200 ms.
        // RTO = max(SRTT + max(G, 4*RTTVAR), MinRto), G = ClockGranularity (ns-3 default 1 ms),
        // doubled on every timeout and capped at 60 s (hard-coded in ns-3 3.37).
        Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(minRto));
        Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(clockGranularity));

        Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
        Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(timestamps));
        Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(windowScaling));
        Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(limitedTransmit));
        Config::SetDefault("ns3::TcpSocketBase::ReTxThreshold", UintegerValue(dupAckThreshold));

        // Pacing stays off (ns-3 default TcpSocketState::EnablePacing = false): segments leave
        // back-to-back at the host NIC's line rate.

        // ECN: off for non-DCTCP senders. TcpDctcp::Init() forces ECN on (ECT(0) data
        // packets, DCTCP-style ECE echo at the receiver) regardless of this attribute.
        Config::SetDefault("ns3::TcpSocketBase::UseEcn",
                           EnumValue(cc == "dctcp" || ecn ? TcpSocketState::On
                                                          : TcpSocketState::Off));
        Config::SetDefault("ns3::TcpDctcp::DctcpShiftG", DoubleValue(dctcpG));
        Config::SetDefault("ns3::TcpDctcp::DctcpAlphaOnInit", DoubleValue(dctcpAlphaInit));
        Config::SetDefault("ns3::TcpDctcp::UseEct0", BooleanValue(true));
        Config::SetDefault("ns3::TcpCubic::Beta", DoubleValue(cubicBeta));
        Config::SetDefault("ns3::TcpCubic::C", DoubleValue(cubicC));
        Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(cubicHystart));
        Config::SetDefault("ns3::TcpCubic::FastConvergence", BooleanValue(cubicFastConvergence));
    }

    Json ToJson() const
    {
        Json j;
        j.Str("cc", cc)
            .Str("cc_type", CcTypeId().GetName())
            .Bool("linux_reno", linuxReno)
            .Str("recovery", recovery)
            .UInt("mss", mss)
            .UInt("init_cwnd", initCwnd)
            .Num("min_rto_s", minRto.GetSeconds())
            .Num("init_rto_s", initRto.GetSeconds())
            .Num("max_rto_s", 60.0)
            .Num("clock_granularity_s", clockGranularity.GetSeconds())
            .Bool("delayed_ack", delayedAck)
            .UInt("del_ack_count", delayedAck ? delAckCount : 1)
            .Num("del_ack_timeout_s", delAckTimeout.GetSeconds())
            .Bool("sack", sack)
            .Bool("timestamps", timestamps)
            .Bool("window_scaling", windowScaling)
            .Bool("limited_transmit", limitedTransmit)
            .UInt("dupack_threshold", dupAckThreshold)
            .UInt("buf_bytes", bufBytes)
            .UInt("syn_retries", synRetries)
            .UInt("data_retries", dataRetries)
            .Bool("ecn", cc == "dctcp" || ecn);
        if (cc == "dctcp")
        {
            j.Num("dctcp_g", dctcpG).Num("dctcp_alpha_init", dctcpAlphaInit);
        }
        if (cc == "cubic")
        {
            j.Num("cubic_beta", cubicBeta)
                .Num("cubic_c", cubicC)
                .Bool("cubic_hystart", cubicHystart)
                .Bool("cubic_fast_convergence", cubicFastConvergence);
        }
        return j;
    }
};

// ---------------------------------------------------------------------------------------------
// Retransmission / timeout accounting
// ---------------------------------------------------------------------------------------------

/// Counts, over every socket attached to it:
///
///  * data_segments: segments with payload (> 0 bytes) the socket handed to IP ("Tx" trace).
///  * retransmits: data segments whose first sequence number is below the highest sequence
///    number (seq + payload length) this socket had sent before. This covers fast
///    retransmits, SACK/RFC 6675 retransmits and RTO retransmits alike, and does not depend
///    on ns-3 internals (we keep our own per-socket high-water mark).
///  * retransmitted_bytes: payload bytes of those segments.
///  * syn_retransmits: SYN segments sent by the socket after it was attached (the first SYN
///    is sent before we can attach - see AttachAfterStart - so every one we see is a retry,
///    i.e. one expiry of the SYN timer, TcpSocket::ConnTimeout doubled per retry).
///  * data_timeouts: expirations of the retransmission timer after the handshake. ns-3 3.37
///    has no per-expiry trace, so we use the "RTO" traced value: TcpSocketBase::ReTxTimeout()
///    sets RTO = min(2*RTO, 60 s) on every expiry, while RTT-based updates set it to
///    max(SRTT + max(G, 4 RTTVAR), MinRto) and never double it exactly. So a change
///    old -> new with old > 0 and new == min(2*old, 60 s) is one expiry. (SYN retries do not
///    show up as a doubling: ns-3 first recomputes RTO from the estimator (1 s + G) and then
///    sets ConnTimeout * 2^retries, which is why they are counted from the SYNs instead.)
///  * timeouts = data_timeouts + syn_retransmits: every retransmission-timer expiry, except
///    expiries that retransmit a bare FIN (not counted; ns-3 normally piggybacks the FIN on
///    the last data segment, and such a timeout would not delay any data anyway).
///  * loss_state_entries: CongState transitions into CA_LOSS. Equals data_timeouts unless
///    the timer fires again while still in CA_LOSS (back-to-back RTOs), which the traced
///    value cannot show (it only fires on change). Reported as a cross-check.
///  * recovery_entries: CongState transitions into CA_RECOVERY (fast-retransmit episodes).
///  * cwr_entries: transitions into CA_CWR (ECN-triggered window reductions, DCTCP).
class TcpMonitor
{
  public:
    uint64_t dataSegments = 0;
    uint64_t dataBytes = 0;
    uint64_t retransmits = 0;
    uint64_t retransmittedBytes = 0;
    uint64_t synRetransmits = 0;
    uint64_t timeouts = 0;      // dataTimeouts + synRetransmits
    uint64_t dataTimeouts = 0;
    uint64_t lossStateEntries = 0;
    uint64_t recoveryEntries = 0;
    uint64_t cwrEntries = 0;
    uint64_t socketsAttached = 0;

    /// Attaches to a TcpSocketBase. Aborts if a trace source is missing (would silently
    /// under-count otherwise).
    void Attach(Ptr<Socket> s)
    {
        Ptr<TcpSocketBase> tcp = DynamicCast<TcpSocketBase>(s);
        NS_ABORT_MSG_UNLESS(tcp, "not a TcpSocketBase");
        Sock* st = new Sock{this, SequenceNumber32(0), false, static_cast<uint32_t>(m_socks.size()),
                            tcp->GetNode()->GetId()};
        m_socks.push_back(st);
        if (std::getenv("NS3_TRACE"))
        {
            tcp->TraceConnectWithoutContext("Rx", MakeBoundCallback(&TcpMonitor::OnRxTrace, st));
            tcp->TraceConnectWithoutContext("CongState", MakeBoundCallback(&TcpMonitor::OnStateTrace, st));
            tcp->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&TcpMonitor::OnCwndTrace, st));
            // DCTCP's estimate at each window's end (bytes marked, bytes acknowledged, alpha).
            PointerValue ops;
            tcp->GetAttribute("CongestionOps", ops);
            if (Ptr<TcpDctcp> d = ops.Get<TcpCongestionOps>()->GetObject<TcpDctcp>())
            {
                d->TraceConnectWithoutContext("CongestionEstimate", MakeBoundCallback(&TcpMonitor::OnAlphaTrace, st));
            }
        }
        bool ok = tcp->TraceConnectWithoutContext("Tx", MakeBoundCallback(&TcpMonitor::OnTx, st));
        ok = ok &&
             tcp->TraceConnectWithoutContext("RTO", MakeBoundCallback(&TcpMonitor::OnRto, st));
        ok = ok && tcp->TraceConnectWithoutContext("CongState",
                                                   MakeBoundCallback(&TcpMonitor::OnCongState, st));
        NS_ABORT_MSG_UNLESS(ok, "TcpSocketBase trace sources Tx/RTO/CongState not found");
        ++socketsAttached;
    }

    /// Attaches to the socket a BulkSendApplication creates in StartApplication(), as soon as
    /// it exists. Events at equal times run in scheduling order, and the app's
    /// StartApplication event is scheduled (by Application::DoInitialize) before the second
    /// hop below, so the socket exists when the second hop runs; if not, retry 1 ns later.
    void AttachAfterStart(Ptr<BulkSendApplication> app, Time at)
    {
        Simulator::Schedule(at, [this, app]() {
            Simulator::ScheduleNow([this, app]() { TryAttach(app, 0); });
        });
    }

    Json ToJson() const
    {
        Json j;
        j.UInt("data_segments", dataSegments)
            .UInt("data_bytes", dataBytes)
            .UInt("retransmits", retransmits)
            .UInt("retransmitted_bytes", retransmittedBytes)
            .UInt("syn_retransmits", synRetransmits)
            .UInt("timeouts", timeouts)
            .UInt("data_timeouts", dataTimeouts)
            .UInt("loss_state_entries", lossStateEntries)
            .UInt("recovery_entries", recoveryEntries)
            .UInt("cwr_entries", cwrEntries)
            .UInt("sockets_monitored", socketsAttached);
        return j;
    }

    ~TcpMonitor()
    {
        for (Sock* s : m_socks)
        {
            delete s;
        }
    }

  private:
    struct Sock
    {
        TcpMonitor* mon;
        SequenceNumber32 highEnd; // highest seq + len sent with payload
        bool any;                 // highEnd valid
        uint32_t idx = 0;         // attach order (diagnostics)
        uint32_t node = 0;        // the sender's node id (diagnostics: tells flows apart)
    };

    static bool Traced(const Sock* st)
    {
        const char* v = std::getenv("NS3_TRACE");
        return v && (std::string(v) == "all" || std::to_string(st->idx) == v);
    }

    static void OnRxTrace(Sock* st, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> s)
    {
        if (!Traced(st)) return;
        std::cerr << Simulator::Now().GetNanoSeconds() / 1000 << " n" << s->GetNode()->GetId() << " ACK " << h.GetAckNumber().GetValue() << " (" << h.GetAckNumber().GetValue() / 1448 << ")";
        if (h.GetFlags() & TcpHeader::ECE)
        {
            std::cerr << " ece";
        }
        if (h.HasOption(TcpOption::SACK))
        {
            Ptr<const TcpOptionSack> o = DynamicCast<const TcpOptionSack>(h.GetOption(TcpOption::SACK));
            std::cerr << " sack";
            for (auto& b : o->GetSackList()) std::cerr << " (" << b.first.GetValue() / 1448 << "," << b.second.GetValue() / 1448 << ")";
        }
        std::cerr << std::endl;
    }

    static void OnCwndTrace(Sock* st, uint32_t o, uint32_t n)
    {
        if (!Traced(st)) return;
        std::cerr << Simulator::Now().GetNanoSeconds() / 1000 << " f" << st->idx << " n" << st->node << " CWND " << o << " -> " << n << std::endl;
    }

    static void OnAlphaTrace(Sock* st, uint32_t marked, uint32_t acked, double alpha)
    {
        if (!Traced(st)) return;
        std::cerr << Simulator::Now().GetNanoSeconds() / 1000 << " f" << st->idx << " n" << st->node << " ALPHA marked " << marked << " acked " << acked << " alpha " << alpha << std::endl;
    }

    static void OnStateTrace(Sock* st, TcpSocketState::TcpCongState_t o, TcpSocketState::TcpCongState_t n)
    {
        if (!Traced(st)) return;
        std::cerr << Simulator::Now().GetNanoSeconds() / 1000 << " f" << st->idx << " n" << st->node << " STATE " << TcpSocketState::TcpCongStateName[o] << " -> " << TcpSocketState::TcpCongStateName[n] << std::endl;
    }

    std::vector<Sock*> m_socks;

    void TryAttach(Ptr<BulkSendApplication> app, int tries)
    {
        Ptr<Socket> s = app->GetSocket();
        if (s)
        {
            Attach(s);
            return;
        }
        NS_ABORT_MSG_IF(tries > 10, "BulkSendApplication socket never appeared");
        Simulator::Schedule(NanoSeconds(1), [this, app, tries]() { TryAttach(app, tries + 1); });
    }

    static void OnTx(Sock* st, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> sk)
    {
        // In TcpSocketBase the traced packet is the payload only (the header is separate).
        uint32_t len = p->GetSize();
        if (Traced(st) && len > 0)
        {
            std::cerr << Simulator::Now().GetNanoSeconds() / 1000 << " f" << st->idx << " n" << sk->GetNode()->GetId() << "   SEND " << h.GetSequenceNumber().GetValue() << "-" << h.GetSequenceNumber().GetValue() + len << " (" << h.GetSequenceNumber().GetValue() / 1448 << ") retx " << (st->any && h.GetSequenceNumber() < st->highEnd) << std::endl;
        }
        if (h.GetFlags() & TcpHeader::SYN)
        {
            // Every SYN we see is a retransmission, i.e. one expiry of the SYN timer.
            st->mon->synRetransmits++;
            st->mon->timeouts++;
        }
        if (len == 0)
        {
            return;
        }
        TcpMonitor* m = st->mon;
        m->dataSegments++;
        m->dataBytes += len;
        SequenceNumber32 seq = h.GetSequenceNumber();
        SequenceNumber32 end = seq + len;
        if (st->any && seq < st->highEnd)
        {
            m->retransmits++;
            m->retransmittedBytes += len;
        }
        if (!st->any || end > st->highEnd)
        {
            st->highEnd = end;
            st->any = true;
        }
    }

    static void OnRto(Sock* st, Time oldV, Time newV)
    {
        if (Traced(st))
        {
            std::cerr << Simulator::Now().GetNanoSeconds() / 1000 << " f" << st->idx << " n" << st->node << " RTO " << oldV.GetNanoSeconds() << " -> " << newV.GetNanoSeconds() << std::endl;
        }
        if (oldV.IsStrictlyPositive() && newV == Min(oldV + oldV, Seconds(60)) && newV != oldV)
        {
            st->mon->dataTimeouts++;
            st->mon->timeouts++;
        }
    }

    static void OnCongState(Sock* st,
                            TcpSocketState::TcpCongState_t oldV,
                            TcpSocketState::TcpCongState_t newV)
    {
        if (newV == oldV)
        {
            return;
        }
        if (newV == TcpSocketState::CA_LOSS)
        {
            st->mon->lossStateEntries++;
        }
        else if (newV == TcpSocketState::CA_RECOVERY)
        {
            st->mon->recoveryEntries++;
        }
        else if (newV == TcpSocketState::CA_CWR)
        {
            st->mon->cwrEntries++;
        }
    }
};

// ---------------------------------------------------------------------------------------------
// Links and queues
// ---------------------------------------------------------------------------------------------

/// A full-duplex point-to-point link a <-> b. Both directions have the same rate and delay.
/// Each end's device gets a DropTail device queue of the given size (packets).
///
/// What a packet experiences on a PointToPointNetDevice (ns-3 3.37):
///  * The device adds a 2-byte PPP header, so it serialises (IP packet + 2) bytes at `rate`.
///    No preamble, FCS or inter-frame gap (InterframeGap attribute = 0). Tandem must use
///    framing_overhead = 2 and no Ethernet header to match.
///  * The receiver gets the packet `delay` after the LAST bit was sent (store-and-forward);
///    the next hop can start forwarding it at once (zero processing delay in ns-3 nodes).
///  * The device queue holds packets WAITING for the transmitter; the packet being
///    serialised is not in it. So a 100-packet queue means 100 waiting + 1 in service.
///  * The device's MTU (`mtu`, IP bytes; ns-3's default 1500) bounds the IP packets it takes
///    whole: IPv4 fragments a larger one (PITFALL: a segment size above 1,448 with
///    timestamps, or 1,460 without, then leaves as several fragments, each queued and dropped
///    on its own). Tandem has no MTU and sends every segment whole, so a spec with jumbo
///    segments needs `mtu` raised to match (scenario.cc: `LinkMtu`).
inline NetDeviceContainer
MakeLink(Ptr<Node> a,
         Ptr<Node> b,
         DataRate rate,
         Time delay,
         uint32_t queueA,
         uint32_t queueB,
         uint16_t mtu = 1500)
{
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(rate));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    p2p.SetChannelAttribute("Delay", TimeValue(delay));
    NetDeviceContainer d = p2p.Install(a, b);
    auto setQ = [](Ptr<NetDevice> dev, uint32_t pkts) {
        Ptr<PointToPointNetDevice> p = DynamicCast<PointToPointNetDevice>(dev);
        p->GetQueue()->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, pkts));
    };
    setQ(d.Get(0), queueA);
    setQ(d.Get(1), queueB);
    return d;
}

/// The DropTail device queue of a point-to-point device.
inline Ptr<Queue<Packet>>
DevQueue(Ptr<NetDevice> dev)
{
    return DynamicCast<PointToPointNetDevice>(dev)->GetQueue();
}

/// Packets the device queue itself dropped (0 in practice, see TcDropCounter).
inline uint64_t
DevQueueDrops(Ptr<NetDevice> dev)
{
    return DevQueue(dev)->GetTotalDroppedPackets();
}

/// The TCP sink's listening address on `port`.
inline Address
AnyAddress(uint16_t port)
{
    return InetSocketAddress(Ipv4Address::GetAny(), port);
}

/// PITFALL: Ipv4AddressHelper::Assign() installs ns-3's default root queue disc
/// (FqCoDelQueueDisc, via TrafficControlHelper::Default) on every device that has none.
/// Uninstalling BEFORE Assign() does not help (Assign installs it); it must be removed AFTER
/// addresses are assigned. Called on all devices, this leaves the device DropTail queue as
/// the only queue, unless a queue disc is installed again afterwards on purpose (dctcp.cc).
/// Aborts if any device still has a root queue disc.
inline void
RemoveAllQueueDiscs(NodeContainer nodes)
{
    TrafficControlHelper tch;
    for (uint32_t n = 0; n < nodes.GetN(); ++n)
    {
        Ptr<Node> node = nodes.Get(n);
        Ptr<TrafficControlLayer> tc = node->GetObject<TrafficControlLayer>();
        for (uint32_t i = 0; i < node->GetNDevices(); ++i)
        {
            Ptr<NetDevice> dev = node->GetDevice(i);
            if (tc && tc->GetRootQueueDiscOnDevice(dev))
            {
                tch.Uninstall(dev);
            }
            NS_ABORT_MSG_IF(tc && tc->GetRootQueueDiscOnDevice(dev),
                            "queue disc still installed on node " << n << " dev " << i);
        }
    }
}

/// Drops that happen in the traffic-control layer of a node.
///
/// With no queue disc, TrafficControlLayer::Send hands packets straight to the device, but
/// only if the device's transmit queue is not "stopped". ns-3's flow control stops a device
/// queue as soon as it cannot take one more packet (i.e. it holds MaxSize packets) and wakes
/// it when one leaves. A packet that arrives while the queue is stopped is dropped by the
/// traffic-control layer (trace source "TcDrop" in ns-3 3.37), NOT by the device queue
/// (whose own drop counter stays 0). That is exactly tail drop at MaxSize packets, but it has
/// to be counted here.
/// We parse the dropped packet's TCP header to tell data (destination port = the sink's,
/// i.e. packets headed for the receiver) from ACKs.
class TcDropCounter
{
  public:
    uint64_t total = 0;
    uint64_t toPort = 0; // drops whose TCP destination port == port

    TcDropCounter(Ptr<Node> node, uint16_t port)
        : m_port(port)
    {
        Ptr<TrafficControlLayer> tc = node->GetObject<TrafficControlLayer>();
        NS_ABORT_MSG_UNLESS(tc, "no TrafficControlLayer");
        bool ok =
            tc->TraceConnectWithoutContext("TcDrop", MakeCallback(&TcDropCounter::OnDrop, this));
        NS_ABORT_MSG_UNLESS(ok, "TrafficControlLayer has no TcDrop trace source");
    }

  private:
    uint16_t m_port;

    void OnDrop(Ptr<const Packet> p)
    {
        total++;
        // In ns-3 3.37 the dropped packet already carries its IPv4 header (the traffic-control
        // layer adds it before testing the device queue). Be robust either way: an IPv4 header
        // starts with 0x45 (no IP options here), a TCP header with the source port, and no
        // port used here (5000, ephemeral >= 49153) starts with byte 0x45.
        Ptr<Packet> c = p->Copy();
        uint8_t first = 0;
        if (c->GetSize() == 0)
        {
            return;
        }
        c->CopyData(&first, 1);
        if (first == 0x45)
        {
            Ipv4Header ip;
            c->RemoveHeader(ip);
            if (ip.GetProtocol() != 6)
            {
                return;
            }
        }
        TcpHeader h;
        if (c->GetSize() >= 20 && c->PeekHeader(h) && h.GetDestinationPort() == m_port)
        {
            toPort++;
        }
    }
};

/// Periodic sampler: calls fn() every `interval` from `start` to `stop` (inclusive of start,
/// exclusive of stop) and keeps the values.
class Sampler
{
  public:
    std::vector<double> samples;

    Sampler(std::function<double()> fn, Time start, Time interval, Time stop)
        : m_fn(std::move(fn)),
          m_interval(interval),
          m_stop(stop)
    {
        if (interval.IsStrictlyPositive())
        {
            Simulator::Schedule(start, &Sampler::Tick, this);
        }
    }

    void Stop()
    {
        m_stop = Simulator::Now();
    }

  private:
    std::function<double()> m_fn;
    Time m_interval;
    Time m_stop;

    void Tick()
    {
        if (Simulator::Now() >= m_stop)
        {
            return;
        }
        samples.push_back(m_fn());
        Simulator::Schedule(m_interval, &Sampler::Tick, this);
    }
};

/// Transmit counters of one device (PhyTxEnd: packets fully serialised, size incl. the
/// 2-byte PPP header).
class TxCounter
{
  public:
    uint64_t packets = 0;
    uint64_t bytes = 0;        // incl. PPP header
    uint32_t maxPacket = 0;    // largest frame seen (PPP header incl.)

    explicit TxCounter(Ptr<NetDevice> dev)
    {
        bool ok = dev->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&TxCounter::On, this));
        NS_ABORT_MSG_UNLESS(ok, "no PhyTxEnd trace");
    }

  private:
    void On(Ptr<const Packet> p)
    {
        packets++;
        bytes += p->GetSize();
        maxPacket = std::max(maxPacket, p->GetSize());
    }
};

/// Wall-clock timer around Simulator::Run(). Returns seconds.
inline double
RunTimed()
{
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(t1 - t0).count();
}

/// Common header of every JSON result: ns-3 version and build profile.
inline void
AddVersion(Json& j)
{
    j.Str("simulator", "ns-3").Str("ns3_version", "3.37").Str("ns3_build_profile",
                                                               Version::BuildProfile());
}

} // namespace tandem_bench

#endif
