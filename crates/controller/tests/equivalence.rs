//! The batched CPU backend and the GPU backend's host pipeline (with the kernel's algorithm run
//! on the host) give exactly the scalar backend's replies, counters and tables, on random event
//! sequences cut into random batches, in both OpenFlow versions; and each, writing into an
//! encoding sink, gives the bytes of those replies, datapath by datapath.

use proptest::prelude::*;
use tandem_controller::event::NO_BUFFER;
use tandem_controller::{
    Backend, CpuBackend, CpuParallelBackend, EncodedReplies, Event, L2Config, L2Switch, PackedBackend, PacketInEvent,
    Reply, ScalarBackend,
};
use tandem_wire::openflow::Version;
use tandem_wire::MacAddr;

/// A MAC out of a small set: unicast 0..6, a multicast and the broadcast address.
fn mac(i: u8) -> MacAddr {
    match i {
        6 => MacAddr([0x01, 0, 0x5e, 0, 0, 1]),
        7 => MacAddr::BROADCAST,
        i => MacAddr([0x02, 0, 0, 0, 0, i]),
    }
}

fn any_event() -> impl Strategy<Value = Event> {
    (
        0u64..3,
        any::<bool>(),
        1u32..5,
        0u8..8,
        0u8..8,
        any::<bool>(),
        any::<u32>(),
        14usize..100,
    )
        .prop_map(|(dpid, v13, in_port, src, dst, buffered, xid, len)| {
            let mut f = vec![0u8; len];
            f[0..6].copy_from_slice(&mac(dst).0);
            f[6..12].copy_from_slice(&mac(src).0);
            let version = if v13 { Version::V1_3 } else { Version::V1_0 };
            let buffer_id = if buffered { xid & 0xffff } else { NO_BUFFER };
            Event {
                dpid,
                packet_in: PacketInEvent::from_frame(version, xid, buffer_id, in_port, len as u16, f).unwrap(),
            }
        })
}

/// The replies' bytes, datapath by datapath in the order of each one's first reply.
fn by_datapath(replies: &[Reply]) -> Vec<(u64, usize, Vec<u8>)> {
    let mut out: Vec<(u64, usize, Vec<u8>)> = Vec::new();
    for r in replies {
        let i = match out.iter().position(|p| p.0 == r.dpid) {
            Some(i) => i,
            None => {
                out.push((r.dpid, 0, Vec::new()));
                out.len() - 1
            }
        };
        out[i].1 += 1;
        out[i].2.extend(r.message.to_bytes().unwrap());
    }
    out
}

/// Runs `events` cut by `cuts` through the scalar backend, `backend` and `encoding` (the same
/// backend writing into an encoding sink), checking that `backend` gives the same replies batch
/// by batch and `encoding` their bytes, then the same counters and tables.
fn same_as_scalar<B: Backend<L2Switch>, E: Backend<L2Switch, EncodedReplies>>(
    mut backend: B,
    mut encoding: E,
    events: &[Event],
    cuts: &[usize],
    max_macs: usize,
) -> Result<(), TestCaseError> {
    let cfg = L2Config {
        max_macs_per_dpid: max_macs,
        ..L2Config::default()
    };
    let (mut a, mut b, mut c) = (L2Switch::new(cfg), L2Switch::new(cfg), L2Switch::new(cfg));
    let mut d = L2Switch::new(cfg);
    let (mut ra, mut rb) = (Vec::new(), Vec::new());
    let (mut rc, mut rd) = (EncodedReplies::new(), EncodedReplies::new());
    let mut rest = events;
    let mut k = 0;
    while !rest.is_empty() {
        let n = cuts[k % cuts.len()].min(rest.len());
        k += 1;
        let (batch, tail) = rest.split_at(n);
        rest = tail;
        ScalarBackend.process(0, batch, &mut a, &mut ra);
        backend.process(0, batch, &mut b, &mut rb);
        prop_assert_eq!(&ra, &rb);
        encoding.process(0, batch, &mut c, &mut rc);
        let encoded: Vec<(u64, usize, Vec<u8>)> = rc.drain().map(|p| (p.dpid, p.messages, p.bytes)).collect();
        prop_assert_eq!(&by_datapath(&ra), &encoded);
        prop_assert_eq!(rc.failed(), 0);
        // The scalar backend into an encoding sink (the app's own encoded entry point).
        ScalarBackend.process(0, batch, &mut d, &mut rd);
        let scalar: Vec<(u64, usize, Vec<u8>)> = rd.drain().map(|p| (p.dpid, p.messages, p.bytes)).collect();
        prop_assert_eq!(&scalar, &encoded);
        ra.clear();
        rb.clear();
    }
    prop_assert_eq!(a.counters(), b.counters());
    prop_assert_eq!(a.counters(), c.counters());
    prop_assert_eq!(a.counters(), d.counters());
    for dpid in 0..3 {
        for m in 0..8 {
            prop_assert_eq!(a.lookup(dpid, mac(m)), b.lookup(dpid, mac(m)));
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn cpu_equals_scalar(events in proptest::collection::vec(any_event(), 0..300),
                         cuts in proptest::collection::vec(1usize..64, 1..20),
                         max_macs in 1usize..8) {
        same_as_scalar(CpuBackend::new(), CpuBackend::new(), &events, &cuts, max_macs)?;
    }

    /// Resolve and replies on 1-4 threads, every batch split however small.
    #[test]
    fn cpu_parallel_equals_scalar(events in proptest::collection::vec(any_event(), 0..300),
                                  cuts in proptest::collection::vec(1usize..64, 1..20),
                                  max_macs in 1usize..8,
                                  threads in 1usize..5) {
        same_as_scalar(
            CpuParallelBackend::new(threads).with_min_per_thread(1),
            CpuParallelBackend::new(threads).with_min_per_thread(1),
            &events,
            &cuts,
            max_macs,
        )?;
    }

    /// The GPU backend's packing and host pipeline, with `reference_resolve` for the kernel.
    #[test]
    fn packed_equals_scalar(events in proptest::collection::vec(any_event(), 0..300),
                            cuts in proptest::collection::vec(1usize..64, 1..20),
                            max_macs in 1usize..8) {
        same_as_scalar(PackedBackend::new(), PackedBackend::new(), &events, &cuts, max_macs)?;
    }
}
