#![no_main]
//! TCP view, option iterator and repr on arbitrary bytes; a parsed repr must round-trip.
use libfuzzer_sys::fuzz_target;
use std::net::Ipv4Addr;
use tandem_wire::tcp::{Packet, TcpRepr};

const A: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const B: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Packet::new_checked(data) {
        for o in p.options() {
            let _ = o;
        }
        let _ = (p.flags(), p.payload().len(), p.verify_checksum(A, B));
        if let Ok(r) = TcpRepr::parse(&p, A, B) {
            if r.header_len() <= 60 {
                let mut out = vec![0u8; r.buffer_len()];
                out[r.header_len()..].copy_from_slice(p.payload());
                r.emit(&mut out, A, B).expect("emit of a parsed repr");
                assert_eq!(TcpRepr::parse(&Packet::new_checked(&out[..]).unwrap(), A, B), Ok(r));
            }
        }
    }
});
