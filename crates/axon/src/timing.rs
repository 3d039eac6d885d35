//! When a frame may start leaving: the thesis's pipeline latencies (Table 4.2) and the two
//! forwarding modes (§4.4.3).
//!
//! What the device assumes of its driver:
//!
//! * a [`crate::Event::Frame`] is fed at the instant the **first byte** of the frame (the first
//!   byte of the destination MAC, or of the Axon header) arrives, after preamble and SFD; the
//!   device derives when the rest arrives from the port's line rate, counting the 4-byte FCS and
//!   padding to the 60-byte minimum ([`wire_time_ps`]). A live driver that only sees whole frames
//!   subtracts that time from its receive timestamp;
//! * a [`crate::Action::Transmit`] says when the frame's first byte may go on the wire; the driver
//!   serializes it (preamble, FCS and inter-frame gap are the driver's) and feeds
//!   [`crate::Event::TxDone`] once the port can start another frame.

/// Bytes of the FCS the MAC appends.
pub const FCS_LEN: u64 = 4;
/// Shortest frame on the wire without FCS (shorter ones are padded).
pub const MIN_FRAME_LEN: u64 = 60;

/// How the device forwards: as the Axon does or as a standard switch would.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ForwardingMode {
    /// The Axon: a frame may start leaving once the pipeline latency has passed since its first
    /// byte arrived (fall-through buffers, §3.2.1), never so early that the output would run
    /// out of bytes (it cannot send a byte before it has arrived).
    CutThrough,
    /// A standard switch: the whole frame is received first, then the same pipeline latency.
    StoreAndForward,
}

/// Pipeline latencies in clock cycles (Table 4.2, 125 MHz on the NetFPGA prototype).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Timing {
    /// One cycle in picoseconds (8 ns).
    pub cycle_ps: u64,
    /// Axon port to output: 65 cycles (520 ns).
    pub from_axon_cycles: u64,
    /// Host port to output, with the route lookup of a header of up to one word: 96 cycles
    /// (768 ns; the lookup is 35 of them).
    pub from_host_cycles: u64,
    /// Hops per extra cycle of header fetched from route memory: one 32-bit word holds 8 hops.
    pub hops_per_fetch_cycle: u64,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            cycle_ps: 8_000,
            from_axon_cycles: 65,
            from_host_cycles: 96,
            hops_per_fetch_cycle: 8,
        }
    }
}

impl Timing {
    /// Latency from an Axon port (or the control plane) to the output: 520 ns by default.
    pub fn from_axon_ps(&self) -> u64 {
        self.from_axon_cycles * self.cycle_ps
    }

    /// Latency from a host port for a stored route of `route_hops` forward hops: 768 ns up to 8
    /// hops, one more cycle for every further 8 hops fetched (§4.4.1).
    pub fn from_host_ps(&self, route_hops: usize) -> u64 {
        let extra = (route_hops.saturating_sub(1) as u64) / self.hops_per_fetch_cycle.max(1);
        (self.from_host_cycles + extra) * self.cycle_ps
    }

    /// When a frame may start leaving. `rx_start` and `rx_end` are when its first and last byte
    /// arrived, `latency` the pipeline latency, `tx_ps` the time the output needs to send it.
    /// Cut-through: `rx_start + latency`, held back if the output (faster, or sending a longer
    /// frame than what is left to arrive) would otherwise need bytes before they arrive: the last
    /// byte cannot leave before `rx_end`. Store-and-forward: `rx_end + latency`.
    pub fn earliest_start(&self, mode: ForwardingMode, rx_start: u64, rx_end: u64, latency: u64, tx_ps: u64) -> u64 {
        match mode {
            ForwardingMode::CutThrough => (rx_start + latency).max(rx_end.saturating_sub(tx_ps)),
            ForwardingMode::StoreAndForward => rx_end + latency,
        }
    }
}

/// Time to send or receive a frame of `len` bytes (no FCS) at `rate_bps`, from its first byte to
/// the end of its FCS, padded to the 60-byte minimum: `(max(len, 60) + 4) * 8` bit times.
pub fn wire_time_ps(len: usize, rate_bps: u64) -> u64 {
    if rate_bps == 0 {
        return 0;
    }
    let bits = ((len as u64).max(MIN_FRAME_LEN) + FCS_LEN) * 8;
    (u128::from(bits) * 1_000_000_000_000 / u128::from(rate_bps)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const GBPS: u64 = 1_000_000_000;

    #[test]
    fn table_4_2_latencies() {
        let t = Timing::default();
        assert_eq!(t.from_axon_ps(), 520_000);
        assert_eq!(t.from_host_ps(1), 768_000);
        assert_eq!(t.from_host_ps(8), 768_000);
        assert_eq!(t.from_host_ps(9), 776_000);
        assert_eq!(t.from_host_ps(100), 768_000 + 12 * 8_000);
    }

    #[test]
    fn wire_times() {
        // 64-byte minimum frame at 1 Gb/s: 512 ns; 1,514 + FCS: 12,144 ns (the thesis's 512 to
        // 12,112 ns store-and-forward penalty, §4.4.3, counts 1,514 bytes without FCS).
        assert_eq!(wire_time_ps(10, GBPS), 512_000);
        assert_eq!(wire_time_ps(60, GBPS), 512_000);
        assert_eq!(wire_time_ps(1514, GBPS), 12_144_000);
        assert_eq!(wire_time_ps(1514, 0), 0);
    }

    #[test]
    fn modes() {
        let t = Timing::default();
        let rx_end = wire_time_ps(1514, GBPS);
        let tx = wire_time_ps(1514, GBPS);
        assert_eq!(
            t.earliest_start(ForwardingMode::CutThrough, 0, rx_end, 520_000, tx),
            520_000
        );
        assert_eq!(
            t.earliest_start(ForwardingMode::StoreAndForward, 0, rx_end, 520_000, tx),
            rx_end + 520_000
        );
        // A 10x faster output must wait so it does not run out of bytes.
        let fast = wire_time_ps(1514, 10 * GBPS);
        assert_eq!(
            t.earliest_start(ForwardingMode::CutThrough, 0, rx_end, 520_000, fast),
            rx_end - fast
        );
    }
}
