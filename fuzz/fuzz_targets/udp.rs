#![no_main]
//! UDP view and repr on arbitrary bytes (fixed pseudo-header addresses); a parsed repr must
//! round-trip with the same payload.
use libfuzzer_sys::fuzz_target;
use std::net::Ipv4Addr;
use tandem_wire::udp::{Packet, UdpRepr};

const SRC: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const DST: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Packet::new_checked(data) {
        let _ = (p.payload().len(), p.verify_checksum(SRC, DST));
        if let Ok(r) = UdpRepr::parse(&p, SRC, DST) {
            let mut out = vec![0u8; r.buffer_len()];
            out[8..].copy_from_slice(p.payload());
            r.emit(&mut out, SRC, DST).expect("emit of a parsed repr");
            assert_eq!(UdpRepr::parse(&Packet::new_checked(&out[..]).unwrap(), SRC, DST), Ok(r));
        }
    }
});
