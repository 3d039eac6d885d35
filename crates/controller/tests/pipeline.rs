//! The whole sans-IO pipeline: packet_in bytes are decoded, summarised, pooled, batched and
//! processed, and the replies encode and decode again.

use tandem_controller::{Backend, CpuBackend, Event, L2Config, L2Switch, PacketInEvent, Pool, PoolConfig};
use tandem_wire::openflow::{Body, Message, OxmField, OxmMatch, PacketIn, Version};

fn packet_in_bytes(version: Version, xid: u32, in_port: u32, src: u8, dst: u8, len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[5] = dst;
    f[11] = src;
    let mut p = PacketIn {
        buffer_id: xid,
        total_len: len as u16,
        data: f,
        ..PacketIn::default()
    };
    if version == Version::V1_0 {
        p.in_port = in_port as u16;
    } else {
        p.oxm = OxmMatch {
            fields: vec![OxmField::InPort(in_port)],
        };
    }
    Message {
        version,
        xid,
        body: Body::PacketIn(p),
    }
    .to_bytes()
    .unwrap()
}

#[test]
fn bytes_in_replies_out() {
    let mut pool = Pool::new(PoolConfig {
        batch: 4,
        deadline_ps: 1_000_000,
        capacity: 64,
    })
    .unwrap();
    let mut sw = L2Switch::new(L2Config::default());
    let mut cpu = CpuBackend::new();
    let mut batch = Vec::new();
    let mut replies = Vec::new();
    for (i, version) in [Version::V1_0, Version::V1_3].into_iter().enumerate() {
        let dpid = i as u64 + 1;
        // 1 -> 2 (flood), 2 -> 1 (flow_mod), 1 -> 2 (flow_mod): 62 and 82 byte frames.
        for (xid, (port, src, dst, len)) in [(1, 1, 2, 82), (2, 2, 1, 62), (1, 1, 2, 62)].into_iter().enumerate() {
            let bytes = packet_in_bytes(version, xid as u32 + 1, port, src, dst, len);
            let (msg, used) = Message::parse(&bytes).unwrap();
            assert_eq!(used, bytes.len());
            let packet_in = PacketInEvent::from_message(&msg).unwrap();
            pool.push(xid as u64, Event { dpid, packet_in });
        }
    }
    assert!(pool.poll(10, &mut batch));
    assert_eq!(batch.len(), 4);
    assert!(batch.windows(2).all(|w| w[0].size() <= w[1].size()));
    cpu.process(10, &batch, &mut sw, &mut replies);
    assert!(!pool.poll(10, &mut batch));
    assert_eq!(pool.next_deadline(), Some(1_000_001));
    assert!(pool.poll(1_000_001, &mut batch));
    cpu.process(1_000_001, &batch, &mut sw, &mut replies);
    assert!(pool.is_empty());
    for r in &replies {
        let bytes = r.message.to_bytes().unwrap();
        assert_eq!(Message::parse(&bytes).unwrap().0, r.message);
    }
    let c = sw.counters();
    assert_eq!(c.learned, 4);
    assert_eq!(c.flow_mods + c.floods + c.hairpin_drops, 6);
}
