#![no_main]
//! IPv4 view and repr on arbitrary bytes; a parsed repr must round-trip.
use libfuzzer_sys::fuzz_target;
use tandem_wire::ipv4::{Ipv4Repr, Packet};

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Packet::new_checked(data) {
        let _ = (p.options().len(), p.payload().len(), p.frag_offset(), p.dscp(), p.ecn());
        if let Ok(r) = Ipv4Repr::parse(&p) {
            let mut out = vec![0u8; r.total_len()];
            r.emit(&mut out).expect("emit of a parsed repr");
            assert_eq!(Ipv4Repr::parse(&Packet::new_checked(&out[..]).unwrap()), Ok(r));
        }
    }
});
