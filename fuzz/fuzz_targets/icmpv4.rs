#![no_main]
//! ICMP view and repr on arbitrary bytes; a parsed repr must round-trip with the same data.
use libfuzzer_sys::fuzz_target;
use tandem_wire::icmpv4::{Icmpv4Repr, Packet};

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Packet::new_checked(data) {
        let _ = (p.rest_of_header(), p.echo_ident(), p.echo_seq_no(), p.data().len());
        if let Ok(r) = Icmpv4Repr::parse(&p) {
            let mut out = vec![0u8; r.buffer_len()];
            out[8..].copy_from_slice(p.data());
            r.emit(&mut out).expect("emit of a parsed repr");
            assert_eq!(Icmpv4Repr::parse(&Packet::new_checked(&out[..]).unwrap()), Ok(r));
        }
    }
});
